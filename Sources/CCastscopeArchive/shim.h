#ifndef CCASTSCOPE_ARCHIVE_SHIM_H
#define CCASTSCOPE_ARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#endif

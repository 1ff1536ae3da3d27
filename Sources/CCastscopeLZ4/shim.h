#ifndef CCASTSCOPE_LZ4_SHIM_H
#define CCASTSCOPE_LZ4_SHIM_H
#include <lz4.h>
#endif

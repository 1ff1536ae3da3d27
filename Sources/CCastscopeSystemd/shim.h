#ifndef CCASTSCOPE_SYSTEMD_SHIM_H
#define CCASTSCOPE_SYSTEMD_SHIM_H
#include <systemd/sd-journal.h>
#endif

#ifndef CCASTSCOPE_MALLOC_SHIM_H
#define CCASTSCOPE_MALLOC_SHIM_H
// glibc's malloc_trim and mallopt, for Sources/CastscopeKit/Sessions/FreedMemory.swift. Declared
// here alone: <malloc.h> would bring <stdio.h>'s globals into a second module.
#include <stddef.h>
#if defined(__linux__)
#include <features.h>
#endif
#if defined(__GLIBC__)
int malloc_trim(size_t pad);
int mallopt(int param, int value);
/// M_MMAP_THRESHOLD of <malloc.h>.
static const int ccastscope_m_mmap_threshold = -3;
#endif
#endif

#ifndef CCASTSCOPE_ZLIB_SHIM_H
#define CCASTSCOPE_ZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 is a function-like macro, which Swift cannot import. */
static inline int ccastscope_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
/* deflateInit2 likewise (gzip request bodies for ClickHouse). */
static inline int ccastscope_deflateInit2(z_streamp strm, int level, int windowBits) {
    return deflateInit2(strm, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
#endif

/*
 * pg_noport.h — after postgres.h: use libc's printf family, not libpgport's
 * replacements that port.h maps them to (the fuzz programs do not link
 * libpgport); and the varlena macros on every version.
 */
#undef printf
#undef fprintf
#undef snprintf
#undef sprintf
#undef vfprintf
#undef vsnprintf
#undef strerror
#undef qsort

/* varlena macros: their own header since PostgreSQL 16 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

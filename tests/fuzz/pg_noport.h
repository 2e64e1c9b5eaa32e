/*
 * pg_noport.h — after postgres.h: use libc's printf family, not libpgport's
 * replacements that port.h maps them to (the fuzz programs do not link
 * libpgport).
 */
#undef printf
#undef fprintf
#undef snprintf
#undef sprintf
#undef vfprintf
#undef vsnprintf
#undef strerror
#undef qsort

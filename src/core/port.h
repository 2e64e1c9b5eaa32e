// port.h — build firewall and portability helpers for the C++ core.
//
// Every core header and every .cc file of src/core includes this header.  The
// core must never see PostgreSQL headers: ereport() is a longjmp that would
// skip C++ destructors, and PostgreSQL's macros (Min, Max, elog, ...) collide
// with the standard library.  If postgres.h was included before us, stop.
// (lsm_core.h is the exception: it is the C API and the shim includes it.)

#ifndef LSM_CORE_PORT_H_
#define LSM_CORE_PORT_H_

#ifdef PG_VERSION_NUM
#error "src/core must not see PostgreSQL headers (see port.h)"
#endif
#ifdef POSTGRES_H
#error "src/core must not see postgres.h (see port.h)"
#endif

#include <cstddef>
#include <cstdint>

#if defined(__GNUC__) || defined(__clang__)
#define LSM_LIKELY(x) (__builtin_expect(!!(x), 1))
#define LSM_UNLIKELY(x) (__builtin_expect(!!(x), 0))
#else
#define LSM_LIKELY(x) (x)
#define LSM_UNLIKELY(x) (x)
#endif

#endif  // LSM_CORE_PORT_H_

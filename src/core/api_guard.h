// api_guard.h — the try/catch frame of every extern "C" function of the
// core: no C++ exception may reach the C shim (see lsm_core.h).
//
//   LsmStatus f(...) noexcept { LSM_API_TRY ... return LSM_OK; LSM_API_CATCH_STATUS }
//   T g(...) noexcept { LSM_API_TRY ... LSM_API_CATCH_RETURN(fallback) }

#ifndef LSM_CORE_API_GUARD_H_
#define LSM_CORE_API_GUARD_H_

#include <new>

#include "lsm_core.h"

#define LSM_API_TRY try {
#define LSM_API_CATCH_STATUS      \
  }                               \
  catch (const std::bad_alloc&) { \
    return LSM_NO_MEMORY;         \
  }                               \
  catch (...) {                   \
    return LSM_INTERNAL;          \
  }
#define LSM_API_CATCH_RETURN(value) \
  }                                 \
  catch (...) {                     \
    return value;                   \
  }

#endif  // LSM_CORE_API_GUARD_H_

# lsm_am — PGXS build of the C shim (src/*.c) and the C++17 core (src/core/*.cc)
EXTENSION = lsm_am
MODULE_big = lsm_am
DATA = $(wildcard sql/lsm_am--*.sql)
PGFILEDESC = "lsm_am - LSM-tree index access method"

SHIM_SRCS = $(wildcard src/*.c src/*/*.c)
CORE_SRCS = $(wildcard src/core/*.cc)
OBJS = $(SHIM_SRCS:.c=.o) $(CORE_SRCS:.cc=.o)

# pg_regress tests: sql/NAME.sql against expected/NAME.out
REGRESS = $(patsubst sql/%.sql,%,$(filter-out sql/lsm_am--%,$(wildcard sql/*.sql)))
REGRESS_OPTS = --inputdir=. --outputdir=regress_out

PG_CPPFLAGS = -I$(srcdir)/src
PG_CXXFLAGS = -std=c++17
SHLIB_LINK = -lstdc++ -lxxhash

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)

# Debian's PGXS also emits LLVM bitcode and would compile the C++ files with
# clang and without PG_CXXFLAGS; the JIT gains nothing from index AM code.
override with_llvm = no

include $(PGXS)

# PGXS passes PG_CXXFLAGS only through CXXFLAGS; make sure C++17 reaches every .cc
override CXXFLAGS += -std=c++17 -fPIC

src/core/%.o: src/core/%.cc $(wildcard src/core/*.h)
	$(CXX) $(CXXFLAGS) -I$(srcdir)/src/core -c -o $@ $<

$(SHIM_SRCS:.c=.o): $(wildcard src/*.h src/*/*.h) src/core/lsm_core.h

.PHONY: unit
unit:
	$(MAKE) -C tests/unit check

# lsm_am — PGXS build of the C shim (src/*.c) and the C++17 core (src/core/*.cc)
EXTENSION = lsm_am
MODULE_big = lsm_am
DATA = $(wildcard sql/lsm_am--*.sql)
PGFILEDESC = "lsm_am - LSM-tree index access method"

SHIM_SRCS = $(wildcard src/*.c src/*/*.c)
CORE_SRCS = $(wildcard src/core/*.cc)
OBJS = $(SHIM_SRCS:.c=.o) $(CORE_SRCS:.cc=.o)

# pg_regress tests: sql/NAME.sql against expected/NAME.out; lsm_setup first
# (the extension and the helpers the others share).  `make installcheck`
# runs them against the running server of PG_CONFIG (lsm_am preloaded), then
# the TAP tests (tests/t/*.pl, each with its own clusters; as a non-root
# user, as initdb requires).  tests/run_all.sh runs the same files.
# The database is created UTF8 with locale C (pg_regress --encoding=UTF8
# --no-locale), whatever the server's defaults (a plain initdb without LANG
# gives SQL_ASCII, where ICU collations and C.UTF-8 do not exist); the TAP
# clusters set theirs in tests/t/LsmCluster.pm.  lsm_collation_libc needs the
# OS locale en_US.UTF-8 and lsm_collation_icu ICU; without them those checks
# are skipped (expected/NAME_1.out).
REGRESS = lsm_setup $(sort $(filter-out lsm_setup,$(patsubst sql/%.sql,%,$(filter-out sql/lsm_am--%,$(wildcard sql/*.sql)))))
REGRESS_OPTS = --inputdir=$(srcdir) --outputdir=regress_out
ENCODING = UTF8
NO_LOCALE = 1
TAP_TESTS = 1
PROVE_TESTS = tests/t/*.pl

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

# `make dist`: lsm_am-X.Y.0.zip, the PGXN distribution of the committed tree
# (HEAD; uncommitted changes are not in it), a top folder lsm_am-X.Y.0.  Its
# version is the committed META.json's, which must be lsm_am.control's
# default_version X.Y written as semver (X.Y.0), or make stops.
# tests/dist_test.sh (unit stage) builds and installs the zip with PGXS alone.
.PHONY: unit check-layers dist
dist:
	@v=$$(git show HEAD:META.json 2>/dev/null | perl -MJSON::PP -0777 -ne 'print decode_json($$_)->{version}' 2>/dev/null); \
	e=$$(git show HEAD:lsm_am.control 2>/dev/null | sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p"); \
	if [ -z "$$v" ] || { [ "$$v" != "$$e.0" ] && [ "$$v" != "$$e" ]; }; then \
		echo "make dist: the committed META.json says version '$$v', lsm_am.control's default_version is '$$e' (want $$e.0)" >&2; \
		exit 1; \
	fi; \
	[ -z "$$(git status --porcelain)" ] || echo "make dist: the zip is made from HEAD; uncommitted changes are not in it" >&2; \
	echo "git archive --format zip --prefix=$(EXTENSION)-$$v/ -o $(EXTENSION)-$$v.zip HEAD"; \
	git archive --format zip --prefix=$(EXTENSION)-$$v/ -o $(EXTENSION)-$$v.zip HEAD

unit:
	$(MAKE) -C tests/unit check

# The floors of the C shim point down (tests/check_layers.sh; also run by
# the unit stage of tests/run_all.sh).
check-layers: all
	bash tests/check_layers.sh

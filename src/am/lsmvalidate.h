/*
 * lsmvalidate.h — amvalidate for lsm operator classes.
 */
#ifndef LSMVALIDATE_H
#define LSMVALIDATE_H

#include "postgres.h"

extern bool lsmvalidate(Oid opclassoid);

#endif							/* LSMVALIDATE_H */

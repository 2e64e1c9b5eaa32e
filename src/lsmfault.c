/*
 * lsmfault.c — the lsm_am.fault setting and the fault points' one check
 * (lsmfault.h says what they are for and how they are armed).
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "common/pg_prng.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "lsmfault.h"

/* in LsmFaultPoint order */
static const char *const LSM_FAULT_NAMES[LSM_FAULT_COUNT] = {
	"log_append_before_wal",
	"log_append_after_wal",
	"memtable_switch",
	"flush_page",
	"flush_filter",
	"flush_before_publish",
	"flush_after_publish",
	"compaction_page",
	"compaction_before_publish",
	"compaction_after_publish",
	"recycle",
	"truncate",
	"vacuum_rewrite",
	"worker_job",
	"build_worker",
};

bool		lsm_fault_armed = false;

static char *lsm_fault_setting = NULL;

/* the armed fault of this process (assign hook) */
static struct
{
	int			point;			/* LsmFaultPoint, -1: none */
	bool		panic;
	int			nth;			/* fire at this pass (prob == 0) */
	double		prob;			/* or at each pass with this probability */
	int			passes;
} lsm_fault = {-1, false, 0, 0.0, 0};

/*
 * Parse 'NAME:KIND[:N|:pP]'.  On success fills the out parameters and
 * returns NULL; otherwise a message saying what is wrong (a constant).
 */
static const char *
LsmFaultParse(const char *value, int *point, bool *panic, int *nth, double *prob)
{
	char		buf[128];
	char	   *kind;
	char	   *count;
	char	   *end;

	*point = -1;
	*panic = false;
	*nth = 1;
	*prob = 0.0;
	if (value == NULL || value[0] == '\0')
		return NULL;
	if (strlen(value) >= sizeof(buf))
		return "the value is too long";
	strcpy(buf, value);
	kind = strchr(buf, ':');
	if (kind == NULL)
		return "the value has no kind (NAME:panic or NAME:error)";
	*kind++ = '\0';
	count = strchr(kind, ':');
	if (count != NULL)
		*count++ = '\0';
	for (int i = 0; i < LSM_FAULT_COUNT; i++)
		if (strcmp(buf, LSM_FAULT_NAMES[i]) == 0)
			*point = i;
	if (*point < 0)
		return "there is no fault point of that name";
	if (strcmp(kind, "panic") == 0)
		*panic = true;
	else if (strcmp(kind, "error") != 0)
		return "the kind is neither panic nor error";
	if (count == NULL)
		return NULL;
	errno = 0;
	if (count[0] == 'p')
	{
		*prob = strtod(count + 1, &end);
		if (errno != 0 || *end != '\0' || end == count + 1 ||
			!(*prob > 0.0 && *prob <= 1.0))
			return "a probability is p followed by a number in (0, 1]";
		return NULL;
	}
	{
		long		n = strtol(count, &end, 10);

		if (errno != 0 || *end != '\0' || end == count || n < 1 || n > INT_MAX)
			return "the count is a positive integer (or pP, a probability)";
		*nth = (int) n;
	}
	return NULL;
}

static bool
LsmFaultCheck(char **newval, void **extra, GucSource source)
{
	int			point;
	bool		panic;
	int			nth;
	double		prob;
	const char *bad = LsmFaultParse(*newval, &point, &panic, &nth, &prob);

	if (bad == NULL)
		return true;
	GUC_check_errmsg("invalid value for lsm_am.fault: \"%s\"", *newval);
	GUC_check_errdetail("%s.", bad);
	{
		/* every name, for the hint */
		static char names[1024];

		names[0] = '\0';
		for (int i = 0; i < LSM_FAULT_COUNT; i++)
		{
			if (i > 0)
				strlcat(names, ", ", sizeof(names));
			strlcat(names, LSM_FAULT_NAMES[i], sizeof(names));
		}
		GUC_check_errhint("The value is NAME:panic or NAME:error, optionally followed by :N (fire at the N-th pass) or :pP (fire with probability P); the names are %s.",
						  names);
	}
	return false;
}

static void
LsmFaultAssign(const char *newval, void *extra)
{
	int			point;
	bool		panic;
	int			nth;
	double		prob;

	/* validated by the check hook; an assign hook must not fail */
	if (LsmFaultParse(newval, &point, &panic, &nth, &prob) != NULL)
		point = -1;
	lsm_fault.point = point;
	lsm_fault.panic = panic;
	lsm_fault.nth = nth;
	lsm_fault.prob = prob;
	lsm_fault.passes = 0;
	lsm_fault_armed = point >= 0;
}

void
LsmFaultDefineGuc(void)
{
	DefineCustomStringVariable("lsm_am.fault",
							   "Arms one lsm_am fault point, for crash and error tests.",
							   "NAME:panic or NAME:error, optionally :N (the N-th pass of the process through the point) or :pP (each pass with probability P). Empty: none.",
							   &lsm_fault_setting, "",
							   PGC_SUSET, GUC_NOT_IN_SAMPLE,
							   LsmFaultCheck, LsmFaultAssign, NULL);
}

void
LsmFaultHit(LsmFaultPoint point)
{
	bool		fire;

	if ((int) point != lsm_fault.point)
		return;
	lsm_fault.passes++;
	if (lsm_fault.prob > 0.0)
		fire = pg_prng_double(&pg_global_prng_state) < lsm_fault.prob;
	else
		fire = lsm_fault.passes == lsm_fault.nth;
	if (!fire)
		return;
	if (lsm_fault.panic)
		ereport(PANIC,
				(errmsg("lsm_am: fault point \"%s\" fired", LSM_FAULT_NAMES[point]),
				 errdetail("lsm_am.fault is \"%s\": the server restarts.", lsm_fault_setting)));
	/* never inside a critical section: there an ERROR would be a PANIC */
	Assert(CritSectionCount == 0);
	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg("lsm_am: fault point \"%s\" fired", LSM_FAULT_NAMES[point]),
			 errdetail("lsm_am.fault is \"%s\".", lsm_fault_setting),
			 errhint("RESET lsm_am.fault (or ALTER SYSTEM RESET lsm_am.fault and reload) disarms it.")));
}

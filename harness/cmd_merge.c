/* cmd_merge.c - `sampbench merge`: joins the shards of one bench, or repeated benches of
 * one matrix, into one HDF5 file; every run keeps the host facts of the file it came
 * from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "harness/cli.h"
#include "harness/matrix.h"
#include "results/h5io.h"

static const char merge_usage[] =
	"usage: sampbench merge [--force] OUT.h5 IN.h5...\n"
	"\n"
	"Joins bench files of one matrix into OUT.h5: the shards of a bench (`bench --shard\n"
	"K/N`; the runs keep the matrix's run ids, so all N shards give the file an unsharded\n"
	"bench would; `none` runs that several shards ran are kept once) or repeated benches\n"
	"(runs renumbered, repetitions continued). Each run keeps the host facts of its file.\n"
	"Refused in one line: files of different matrices, profiles, A/B candidates or schema\n"
	"versions, shards of different splits, shards next to whole benches, and a shard or a\n"
	"file given twice.\n"
	"\n";

static struct env {
	const char *out;
	char **in;
	int nin;
	int force;
} env;

static const struct env env_defaults = { 0 };

/* One input file: its identity (root attributes) and, once loaded, its runs. */
struct input {
	const char *path;
	double schema, complete;
	char digest[32], profile[MX_NAME_LEN], runs_attr[24], shard[24], ab[48], created[40];
	char hostname[64];
	int k, nshards; /* 0, 0: not a shard */
	struct sb_host host;
	struct sb_run *runs;
	size_t n;
};

const struct opt cmd_merge_options[] = {
	OPT_BOOLEAN('f', "force", &env.force, "overwrite OUT.h5 if it exists"),
	OPT_HELP(),
	OPT_END(),
};

/* Parses argv into env. Returns 0, 1 for --help, or -1 after one line on stderr. */
static int parse_args(int argc, char **argv)
{
	env = env_defaults;
	int first = opt_parse("merge", cmd_merge_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP)
		return 1;
	if (first < 0)
		return -1;
	if (opt_operands("merge", argv, first, argc, 2, -1,
			 first == argc ? "OUT.h5 and IN.h5" : "IN.h5") != 0)
		return -1;
	env.out = argv[first];
	env.in = argv + first + 1;
	env.nin = argc - first - 1;
	return 0;
}

/* Reads the identity of in->path. Returns 0, or -1 after one line on stderr. */
static int read_identity(struct input *in)
{
	static const struct {
		const char *name;
		size_t off, len;
	} strs[] = {
		{ "matrix_digest", offsetof(struct input, digest), sizeof(((struct input *)0)->digest) },
		{ "matrix_profile", offsetof(struct input, profile), sizeof(((struct input *)0)->profile) },
		{ "matrix_runs", offsetof(struct input, runs_attr), sizeof(((struct input *)0)->runs_attr) },
		{ "shard", offsetof(struct input, shard), sizeof(((struct input *)0)->shard) },
		{ "ab_rev", offsetof(struct input, ab), sizeof(((struct input *)0)->ab) },
		{ "created", offsetof(struct input, created), sizeof(((struct input *)0)->created) },
		{ "host", offsetof(struct input, hostname), sizeof(((struct input *)0)->hostname) },
	};
	char err[512];

	int rc = h5_read_attr_num(in->path, "schema_version", &in->schema, err, sizeof(err));
	if (rc != 0) {
		if (rc < 0)
			sb_err("%s", err);
		else
			sb_err("'%s' has no attribute schema_version", in->path);
		return -1;
	}
	if (h5_read_attr_num(in->path, "complete", &in->complete, err, sizeof(err)) != 0)
		in->complete = 0;
	for (size_t i = 0; i < ARRAY_SIZE(strs); i++)
		if (h5_read_attr(in->path, strs[i].name, (char *)in + strs[i].off, strs[i].len, err,
				 sizeof(err)) < 0) {
			sb_err("%s", err);
			return -1;
		}
	if (in->shard[0] && matrix_parse_shard(in->shard, &in->k, &in->nshards) != 0) {
		sb_err("'%s' has a malformed shard attribute '%s'", in->path, in->shard);
		return -1;
	}
	return 0;
}

/* Refuses inputs that are not parts of one bench, naming the first pair that differs. */
static int check_compatible(const struct input *in, int n)
{
	const struct input *a = &in[0];

	for (int i = 1; i < n; i++) {
		const struct input *b = &in[i];
		const char *what = NULL, *va = NULL, *vb = NULL;
		char sa[32], sb[32];
		if (a->schema != b->schema) {
			snprintf(sa, sizeof(sa), "%g", a->schema);
			snprintf(sb, sizeof(sb), "%g", b->schema);
			what = "schema_version", va = sa, vb = sb;
		} else if (strcmp(a->digest, b->digest)) {
			what = "matrix_digest", va = a->digest, vb = b->digest;
		} else if (strcmp(a->profile, b->profile)) {
			what = "matrix_profile", va = a->profile, vb = b->profile;
		} else if (strcmp(a->ab, b->ab)) {
			what = "ab_rev", va = a->ab, vb = b->ab;
		} else if (a->nshards != b->nshards) {
			what = "shard", va = a->shard, vb = b->shard;
		}
		if (what) {
			sb_err("cannot merge '%s' with '%s': %s differs ('%s', '%s')", b->path, a->path,
			       what, vb, va);
			return -1;
		}
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++) {
			if (in[i].nshards && in[i].k == in[j].k) {
				sb_err("shard %s is given twice ('%s', '%s')", in[i].shard, in[j].path,
				       in[i].path);
				return -1;
			}
			if (!in[i].nshards && !strcmp(in[i].created, in[j].created) &&
			    !strcmp(in[i].hostname, in[j].hostname)) {
				sb_err("'%s' is the same bench as '%s' (given twice)", in[i].path,
				       in[j].path);
				return -1;
			}
		}
	return 0;
}

struct ref {
	const struct input *in;
	struct sb_run *r;
};

static int by_run_id(const void *pa, const void *pb)
{
	const struct ref *a = pa, *b = pb;
	return a->r->run_id < b->r->run_id ? -1 : a->r->run_id > b->r->run_id;
}

/* The runs in output order with their output ids: shards by matrix run id (one `none`
 * per id), whole benches one after the other, renumbered, repetitions continued. Returns
 * the count, or -1 after one line on stderr. */
static long order_runs(struct input *in, int nin, struct ref *refs)
{
	size_t n = 0;

	if (in[0].nshards) {
		for (int i = 0; i < nin; i++)
			for (size_t j = 0; j < in[i].n; j++)
				refs[n++] = (struct ref){ &in[i], &in[i].runs[j] };
		qsort(refs, n, sizeof(*refs), by_run_id); /* stable enough: ties are checked */
		size_t w = 0;
		for (size_t i = 0; i < n; i++) {
			if (w && refs[w - 1].r->run_id == refs[i].r->run_id) {
				if (strcmp(refs[i].r->sampler, "none")) {
					sb_err("run %lld is in both '%s' and '%s'",
					       (long long)refs[i].r->run_id, refs[w - 1].in->path,
					       refs[i].in->path);
					return -1;
				}
				continue; /* the overhead reference, run by several shards */
			}
			refs[w++] = refs[i];
		}
		return (long)w;
	}
	int rep_base = 0;
	for (int i = 0; i < nin; i++) {
		int max_rep = -1;
		for (size_t j = 0; j < in[i].n; j++) {
			struct sb_run *r = &in[i].runs[j];
			if (r->repetition > max_rep)
				max_rep = r->repetition;
			r->repetition += rep_base;
			r->run_id = (int64_t)n;
			refs[n++] = (struct ref){ &in[i], r };
		}
		rep_base += max_rep + 1;
	}
	return (long)n;
}

int cmd_merge(int argc, char **argv)
{
	struct input *in = NULL;
	struct ref *refs = NULL;
	struct sb_h5 *f = NULL;
	char err[512], count[24];
	int rc = SB_EXIT_USAGE;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(merge_usage, stdout);
		opt_help(stdout, cmd_merge_options);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;
	in = calloc((size_t)env.nin, sizeof(*in));
	if (!in) {
		sb_err("out of memory");
		return SB_EXIT_FAIL;
	}
	for (int i = 0; i < env.nin; i++) {
		in[i].path = env.in[i];
		if (read_identity(&in[i]) != 0)
			goto cleanup;
	}
	if (check_compatible(in, env.nin) != 0)
		goto cleanup;
	for (int i = 0; i < env.nin; i++) { /* all of them: shards are sorted across files */
		if (h5_read(in[i].path, &in[i].host, &in[i].runs, &in[i].n, 1, err, sizeof(err)) != 0) {
			sb_err("%s", err);
			goto cleanup;
		}
	}
	size_t total = 0;
	for (int i = 0; i < env.nin; i++)
		total += in[i].n;
	refs = calloc(total ? total : 1, sizeof(*refs));
	if (!refs) {
		sb_err("out of memory");
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	long n = order_runs(in, env.nin, refs);
	if (n < 0)
		goto cleanup;

	int complete = 1;
	for (int i = 0; i < env.nin; i++)
		complete &= in[i].complete == 1;
	if (in[0].nshards && env.nin != in[0].nshards)
		complete = 0; /* a shard is missing */
	f = h5_create(env.out, &in[0].host, env.force, err, sizeof(err));
	if (!f) {
		sb_err("%s", err);
		goto cleanup;
	}
	snprintf(count, sizeof(count), "%d", env.nin);
	const char *attrs[] = { "matrix_digest", in[0].digest, "matrix_profile", in[0].profile,
				"matrix_runs", in[0].runs_attr, "ab_rev", in[0].ab,
				"shard", complete || !in[0].nshards ? "" : "partial",
				"merged_files", count, NULL };
	for (size_t i = 0; attrs[i]; i += 2)
		if (h5_set_attr(f, attrs[i], attrs[i + 1]) != 0)
			goto write_failed;
	for (long i = 0; i < n; i++)
		if (h5_append_run_host(f, refs[i].r, &refs[i].in->host) != 0)
			goto write_failed;
	h5_set_complete(f, complete);
	if (h5_strerror(f)[0])
		goto write_failed;
	rc = h5_close(f) == 0 ? SB_EXIT_OK : SB_EXIT_FAIL;
	f = NULL;
	if (rc == SB_EXIT_OK)
		printf("merged %ld runs of %d files into %s%s\n", n, env.nin, env.out,
		       complete ? "" : " (incomplete: a shard or an input is missing runs)");
	goto cleanup;
write_failed:
	sb_err("%s", h5_strerror(f));
	h5_abort(f);
	f = NULL;
	rc = SB_EXIT_FAIL;
cleanup:
	for (int i = 0; in && i < env.nin; i++) {
		for (size_t j = 0; j < in[i].n; j++)
			run_free(&in[i].runs[j]);
		free(in[i].runs);
	}
	free(in);
	free(refs);
	return rc;
}

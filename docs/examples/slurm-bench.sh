#!/bin/sh
# docs/examples/slurm-bench.sh - the `full` profile as a Slurm job array, one shard per
# task, then a dependent job that merges and gates (docs/bench.md, "Many machines"):
#
#   sh docs/examples/slurm-bench.sh            # from the top of a built checkout
#
# Every task runs in the same checkout (a shared file system); a task that dies can be
# continued with `sampbench bench --resume results/runs/slurm-<job>-<k>.h5.tmp`.
#SBATCH --job-name=sampbench
#SBATCH --cpus-per-task=2
#SBATCH --exclusive
set -eu
PROFILE=${PROFILE:-full}
SHARDS=${SHARDS:-4}

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
	# submitter: the array, then merge + gate once every task has ended
	mkdir -p results/runs
	job=$(sbatch --parsable --array=1-"$SHARDS" --export=ALL,PROFILE="$PROFILE",SHARDS="$SHARDS" "$0")
	sbatch --dependency=afterany:"$job" --export=ALL,MERGE_JOB="$job",SHARDS="$SHARDS" \
		--wrap "build/sampbench merge results/runs/slurm-$job.h5 results/runs/slurm-$job-*.h5 && build/sampbench gate --json results/runs/slurm-$job.gate.json results/runs/slurm-$job.h5"
	echo "submitted array $job ($SHARDS shards of $PROFILE) and its merge"
	exit 0
fi
# a task: one shard; exit 1 (a run failed) still leaves a whole file to merge
out=results/runs/slurm-$SLURM_ARRAY_JOB_ID-$SLURM_ARRAY_TASK_ID.h5
build/sampbench bench --profile "$PROFILE" --shard "$SLURM_ARRAY_TASK_ID/$SHARDS" -o "$out" || [ $? -eq 1 ]

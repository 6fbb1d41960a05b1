#!/bin/sh
# Run as a Slurm job's command: submits a second job, named after this one plus "-left" (so
# its name starts with runplan's owner tag and it is runplan's to end), that sleeps 600 s;
# prints sbatch's "Submitted batch job N", then sleeps $1 seconds (0: exits at once).
set -eu
sbatch --job-name="${SLURM_JOB_NAME}-left" --output=/dev/null --wrap='sleep 600'
sleep "${1:-0}"

#!/usr/bin/env bash
# README command 1: set everything up, then run the main job
# (author -> build -> check -> publish to the local hub -> get_kernel -> run on a photograph).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/kernelkit demo "$@"

"""The builder: from a manifest to sealed ``build/<variant>/`` trees, through one pipeline.

    plan_matrix.py   plan (pure): the whole matrix, or one interpreter's backends, as data
    facts.py         what this machine offers for planning (cores, CUDA toolkit, wheels)
    plan.py          one variant's plan (pure): name, op namespace, capabilities, checks
    environment.py   where a variant compiles: this interpreter, or its pinned environment
    envs.py          pinned venvs: create, probe, repair, drift against the toolchain lock
    toolkit.py       the CUDA toolkit: one finder, one value type, system-vs-wheels choice
    probe.py         what torch an interpreter has (one subprocess)
    variant.py       build_variant: the only code that compiles (generate, CMake, ninja, seal)
    build_cache.py   skip a variant whose inputs did not change
    execute.py       the thin parallel executor, outcomes and progress events
    api.py           entry points: plan_build, run_plan, build, plan_variants, env_for_variant
    toolchain_lock.py, wheel_sources.py   pinned wheels of every environment

Nothing here parses arguments or prints: the CLI (``kernelkit.cli.cmd_build``) renders the
plan and the events. This package import stays light (no torch, no cmake).
"""

"""CUDA's MSBuild integration in Visual Studio (BuildCustomizations): plan (pure) / apply / verify / undo.

    names     the integration's file names, folders and supported VS/CUDA pairs
              (rules: envmgr.knowledge, docs/knowledge.md#msbuild-integration)
    plan      gather (reads through the Host) and make_plan (pure): ok / missing / stale / orphan
    fileops   the writer seam (the Host only reads): local files, or a Wine prefix's drive_c
    store     backups and manifests under the user data folder (ENVMGR_DATA_DIR overrides)
    apply     transactions: temp file, hash check, rename; rollback on any failure; undo
    planfile  the plan file of the elevated step, and the checks that step makes
    elevate   Start-Process -Verb RunAs (Windows only), its command line built by a pure function
    render    table, JSON and the routes that need no admin rights
    repair    the steps without prompts (may write? one pair's plan, apply + verify), shared with `install --fix`
The command's interactive steps (spinner, prompts, elevation, printing) are at the CLI edge:
envmgr/commands/fix_msbuild_flow.py.

Imports every layer up to doctor/ (and shellkit's PowerShell quoting for elevate.py).
"""

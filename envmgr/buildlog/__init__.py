"""buildlog: a build or load log's text in, catalog ids with their evidence out (`doctor --log`).

The stages, in the order a log goes through them, each a module named after it:

1. read       - the file, with size caps, decoded whatever its encoding (read.py)
2. clean      - terminal escapes, paste forms (JSON-escaped, prefixed, wrapped) undone (clean.py)
3. clock      - timestamps and elapsed times, for the "stopped by a time limit" family (clock.py)
4. engine     - one pass over the lines: needles found, signatures matched, bounded memory (engine.py)
5. signatures - what a signature is (a tool's own sentence for an id) and its helpers (signatures.py)
6. facts      - what the lines say beyond one pattern: error codes, versions, names, in any wording (facts.py)
7. rules      - one module per family: its signatures, its fact patterns, its decision functions and its ids; one
                ordered registry whose order is the order of decision, and the signature table (rules/__init__.py)
8. unnamed    - what a log without an id shows: success, no output, cut, outside the catalog, vetoed (unnamed.py)
9. context    - the machine and the run the log shows (NVIDIA, a Mac, another vendor, an ARM board, the CPU chosen,
                the tools' failure lines); the veto of a CPU-family id it rules out, with the reason (context.py)
10. advice    - the fix for this log's id, tailored to what it names (advice.py)
11. report    - the answer as text and as the `--json` document (report.py)

scan.py runs them in that order (`scan_path`). Imports only the vocabulary (catalog, knowledge, errors) and
files/.
"""

# SPDX-License-Identifier: GPL-2.0-or-later
"""pytest's results as tests/summary.py counts them: '# checks: P passed, F
failed, S skipped', and each skip's 'SKIP(FEATURE): why' (a test skips with
such a reason)."""


def pytest_terminal_summary(terminalreporter):
    st = terminalreporter.stats
    passed = len(st.get("passed", []))
    failed = len(st.get("failed", [])) + len(st.get("error", []))
    skipped = st.get("skipped", [])
    for rep in skipped:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        reason = reason.replace("Skipped: ", "", 1)
        terminalreporter.write_line(reason if reason.startswith("SKIP(") else
                                    "SKIP(?): " + reason)
    terminalreporter.write_line("# checks: %d passed, %d failed, %d skipped" % (
        passed, failed, len(skipped)))

"""F20's time limits in the words of the tools that stop a job (issue 23, round 9): each line as the tool prints
it, taken from the tool's source or from a public thread that quotes the tool's output (source at each line), in a
build log around it; and lines that name a limit of something else (a network read, a test run) that are not one.
"""

from __future__ import annotations

import pytest

from tests.logtext import decisive, facts

BUILD = (
    "[12/96] /usr/local/cuda/bin/nvcc -c ../csrc/kernels/attention.cu -o attention.cu.o "
    "-gencode=arch=compute_80,code=sm_80\n"
)

LIMITS = [
    # AppVeyor (quoted in appveyor/ci#3872 and LibrePCB/LibrePCB#68)
    "Build execution time has reached the maximum allowed time for your plan (60 minutes).",
    # GitLab's failure reason stuck_or_timeout_failure (gitlab app/presenters/commit_status_presenter.rb)
    "There has been a timeout failure or the job got stuck. Check your timeout limits or try again",
    # Jenkins Pipeline's timeout step (workflow-basic-steps TimeoutStepExecution.java)
    "Cancelling nested steps due to timeout",
    "Timeout has been exceeded",
    # CircleCI's job runtime limit (quoted in AlexsLemonade/OpenPBTA-analysis#1225)
    "Try out a larger resource class or running tests in parallel to speed up job execution. Upgrade your pricing "
    "plan to take advantage of longer max job runtimes.",
    # Read the Docs (readthedocs.org doc_builder exceptions: BuildTimeoutError)
    "Build exited due to time out",
    # Bitbucket Pipelines (support.atlassian.com KB "Exceeded build time limit error")
    "Exceeded build time limit of 120 minutes",
    # PBS/Torque's MOM (quoted in threads of ESMF and MetaCentrum users)
    "=>> PBS: job killed: walltime 3611 exceeded limit 3600",
    # coreutils timeout --verbose (coreutils/uutils tests)
    "timeout: sending signal TERM to command 'ninja'",
]


@pytest.mark.parametrize("line", LIMITS)
def test_a_tools_own_time_limit_line_is_f20(line, tmp_path):
    assert facts(BUILD + line + "\n").first("time_limit") is not None
    assert decisive(BUILD + line + "\n", tmp_path) == ("F20", "anchor:time-limit")


@pytest.mark.parametrize(
    "line",
    [
        # a network's deadline and a read timeout are no limit on the job
        "ERROR: failed to solve: DeadlineExceeded: context deadline exceeded",
        "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', port=443): "
        "Read timed out.",
    ],
)
def test_a_network_deadline_is_no_time_limit(line):
    assert facts(BUILD + line + "\n").first("time_limit") is None


def test_a_timeout_a_test_run_hit_stays_no_build_limit(tmp_path):
    # the Pipeline step's line on a test run's own line (pytest named): tests that hang are no long build
    assert decisive("Timeout has been exceeded: pytest tests/ -x\n", tmp_path)[0] != "F20"

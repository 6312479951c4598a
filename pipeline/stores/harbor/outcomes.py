"""A trial's verifier rewards or exception as an ``outcome`` entry (specs/harbor-jobs.md §4).

The score is ``rewards["reward"]``, else the value of the only key, else none;
every key goes in the details.  ``pass`` is what the task says (a ``pass`` or
``passed`` key), else a score of 1 or more: Harbor's export says ``> 0``, but
RL users mean a solved task.  An exception without rewards is a ``task`` outcome
that failed, with no score.  ``reward_valid`` follows Harbor's error policy:
rewards, and no exception other than one the agent caused.
"""

from __future__ import annotations

from typing import Any

from .trials import Trial

JSON = Any
#: exception type -> failure cause, as ``harbor@0.25.0:models/trial/error_policy.py`` has them
#: (any other type is ``unclassified``)
CAUSES = {
    name: cause
    for cause, names in {
        "sandbox_failed": "EnvironmentStartTimeoutError SandboxBuildFailedError AgentSetupTimeoutError "
        "HealthcheckError SandboxLikelyOutOfMemoryError MemoryLimitExceededError SSHAccessError "
        "GKEExecStreamClosedError GKEPodNotFoundError RuntimeRequestError AddTestsDirError "
        "DownloadVerifierDirError",
        "model_provider_failed": "ApiError ApiRateLimitError ApiInternalServerError ApiOverloadedError "
        "ApiConnectionClosedError ApiResponseStalledError UnknownApiError NetworkConnectionError "
        "ApiConnectionError ApiUsageLimitError RateLimitError InternalServerError "
        "ServiceUnavailableError APIConnectionError APIError Timeout BadRequestError "
        "UnprocessableEntityError UnsupportedParamsError APIResponseValidationError "
        "BudgetExceededError AgentAuthenticationError ModelNotFoundError "
        "ApiProviderResourceNotFoundError AuthenticationError PermissionDeniedError NotFoundError",
        "harbor_failed": "ServiceOperationsUnsupportedError VercelScopeError DspyImportError "
        "MissingExtraError RegradeError",
        "agent_exhausted_budget": "AgentTimeoutError ContextWindowExceededError "
        "OutputTokenExceededError ContextLengthExceededError OutputLengthExceededError",
        "agent_refused_task": "AgentSafetyRefusalError ContentPolicyViolationError",
        "verifier_failed": "VerifierTimeoutError RewardFileNotFoundError RewardFileEmptyError "
        "VerifierOutputParseError",
        "cancelled": "CancelledError",
    }.items()
    for name in names.split()
}
AGENT_CAUSED = ("agent_exhausted_budget", "agent_refused_task")
#: reward keys by which a task says itself whether the trial passed
PASS_KEYS = ("pass", "passed")


def score_of(rewards: dict[str, float]) -> float | None:
    """``reward``, else the only key's value, else None (several keys, none named reward)."""
    if "reward" in rewards:
        return rewards["reward"]
    return next(iter(rewards.values())) if len(rewards) == 1 else None


def outcome(trial: Trial, target: str | None) -> dict[str, JSON] | None:
    """The outcome body of a finished trial (None while it runs: no ``result.json``)."""
    if trial.result is None:
        return None
    exc = trial.exception
    cause = CAUSES.get(str((exc or {}).get("exception_type")), "unclassified") if exc else None
    details: dict[str, JSON] = {
        "task_name": trial.result.get("task_name"),
        "trial_name": trial.name,
        "trial_id": trial.id,
        "reward_valid": trial.rewards is not None and cause in (None, *AGENT_CAUSED),
    }
    if exc is not None:
        details["failure_cause"] = cause
        details["exception"] = {
            k: exc.get(k) for k in ("exception_type", "exception_message", "occurred_at")
        }
    body: dict[str, JSON] = {"type": "outcome"}
    if trial.rewards is not None:
        details["rewards"] = trial.rewards.values
        body |= {"kind": "test", "label": "harbor-verifier"}
        score = score_of(trial.rewards.values)
        if score is not None:
            body["score"] = score
        said = next((trial.rewards.values[k] for k in PASS_KEYS if k in trial.rewards.values), None)
        if said is not None or score is not None:
            body["pass"] = said != 0 if said is not None else score is not None and score >= 1
    else:
        body |= {"kind": "task", "label": "harbor-exception" if exc else "harbor-unverified"}
        body["pass"] = False if exc else None
        if body["pass"] is None:
            del body["pass"]
    if target:
        body["target"] = target
    body["details"] = details
    return body

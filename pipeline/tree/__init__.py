"""Session trees: the context algorithm, trajectories, fork decisions and preference policies."""

from .context import build_context, canonical_request, request_context, request_hash
from .index import TreeIndex
from .outcomes import leaf_outcome, outcome_records
from .policies import POLICIES, Policy, choose, parse_policy, policy_label
from .trajectories import decide, main_trajectory, trajectories

__all__ = [
    "POLICIES",
    "Policy",
    "TreeIndex",
    "build_context",
    "canonical_request",
    "choose",
    "decide",
    "leaf_outcome",
    "main_trajectory",
    "outcome_records",
    "parse_policy",
    "policy_label",
    "request_context",
    "request_hash",
    "trajectories",
]

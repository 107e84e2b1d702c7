"""Models named by a Hugging Face Hub id: ``Qwen/Qwen3-8B``, ``org/name@revision``, ``hf:gpt2``.

``load`` resolves a name as a local path first, then a preset or a family, then a Hub id (``hf:``
in front forces the Hub). Only ``config.json`` is fetched, with ``huggingface_hub``'s
``hf_hub_download``: the user's cache, ``HF_HUB_OFFLINE`` and ``HF_TOKEN`` (gated repositories)
work as they do for transformers. ``huggingface_hub`` is imported only here, and only when a Hub
id is given. Every fault -- a malformed id, no network, an unknown, gated or disabled repository,
an unknown revision, a repository without a config.json -- is one :class:`SymgptError` line,
mapped from huggingface_hub's exception classes (never from message text).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..core.errors import SymgptError, printable

PREFIX = "hf:"
MAX_ID = 96         # huggingface_hub's own bound on a repo id
MAX_REVISION = 255  # a git ref name

_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?"
_ID = re.compile(rf"(?:{_PART}/)?{_PART}")
_REVISION = re.compile(r"[A-Za-z0-9._/-]+")
#: an ``org/name`` (one slash, no path punctuation) a bare name may be read as, after local paths
#: and presets: ``./x``, ``/x``, ``~/x``, ``a/b/c`` and ``x.json`` stay paths
_LOOKS_LIKE_ID = re.compile(rf"{_PART}/{_PART}(?:@[^\s]+)?")


class HubId(NamedTuple):
    repo: str
    revision: str | None

    def __str__(self) -> str:
        return self.repo + (f"@{self.revision}" if self.revision else "")


def looks_like_id(text: str) -> bool:
    """Whether *text* (not a local path, not a preset) is to be read as an ``org/name`` Hub id."""
    return bool(_LOOKS_LIKE_ID.fullmatch(text)) and not text.split("@", 1)[0].endswith(".json")


def parse(text: str) -> HubId:
    """The repository and revision of ``[hf:]org/name[@revision]``; a one-line error for anything
    else (path traversal, characters a repo id cannot hold, lengths past the Hub's limits)."""
    shown = printable(text[:120])
    body = text[len(PREFIX):] if text.startswith(PREFIX) else text
    repo, at, revision = body.partition("@")
    if not repo:
        raise SymgptError(f"{shown}: a Hub id is org/name or name (with @revision optionally)")
    if len(repo) > MAX_ID:
        raise SymgptError(f"Hub id {shown}: longer than {MAX_ID} characters")
    if (not _ID.fullmatch(repo) or ".." in repo or "--" in repo or repo.endswith(".git")):
        raise SymgptError(f"{shown} is not a Hub id (org/name: letters, digits, '-', '_', '.'; "
                          "no '..', '--' or a trailing .git)")
    if at:
        if not revision or len(revision) > MAX_REVISION or not _REVISION.fullmatch(revision) \
                or ".." in revision or revision.startswith("/") or revision.endswith("/") or "//" in revision:
            raise SymgptError(f"{shown}: the revision after '@' must be a branch, tag or commit "
                              "(letters, digits, '.', '_', '-', '/'; no '..')")
    return HubId(repo, revision or None)


def _connection_errors() -> tuple[type[BaseException], ...]:
    """The transport errors of the HTTP clients huggingface_hub uses (httpx2, httpx, or requests
    for older releases: whichever it has imported), with the standard library's."""
    import sys

    out: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for client in ("httpx2", "httpx"):
        mod = sys.modules.get(client)
        if mod is not None and hasattr(mod, "TransportError"):
            out.append(mod.TransportError)
    requests = sys.modules.get("requests")
    if requests is not None and hasattr(requests, "exceptions"):
        out += [requests.exceptions.ConnectionError, requests.exceptions.Timeout]
    return tuple(out)


def hub_error(e: BaseException, hub_id: HubId, what: str) -> SymgptError | None:
    """The one-line error for huggingface_hub's exception *e* while fetching *what* of *hub_id*,
    by class; None when *e* is none of them (a bug: let it through)."""
    from huggingface_hub import errors as E

    repo = f"Hub repository {hub_id.repo}"
    if isinstance(e, E.OfflineModeIsEnabled) or (
            isinstance(e, E.LocalEntryNotFoundError) and not isinstance(e, E.HfHubHTTPError)):
        return SymgptError(f"{what} of {hub_id} is not in the Hugging Face cache and the Hub cannot be "
                           "reached (no network, or HF_HUB_OFFLINE is set)")
    if isinstance(e, E.GatedRepoError):
        return SymgptError(f"{repo} is gated: accept its terms on the Hub and set HF_TOKEN "
                           "(or run 'hf auth login')")
    if isinstance(e, E.RepositoryNotFoundError):
        return SymgptError(f"{repo} not found (or private: set HF_TOKEN), and no local path of that name")
    if isinstance(e, E.RevisionNotFoundError):
        return SymgptError(f"{repo} has no revision {hub_id.revision!r}")
    if isinstance(e, E.EntryNotFoundError):
        return SymgptError(f"{repo} has no {what}" + (f" at revision {hub_id.revision}" if hub_id.revision else ""))
    disabled = getattr(E, "DisabledRepoError", None)
    if disabled is not None and isinstance(e, disabled):
        return SymgptError(f"{repo} is disabled on the Hub")
    if isinstance(e, E.HFValidationError):
        return SymgptError(f"{printable(str(hub_id))[:120]} is not a valid Hub id")
    if isinstance(e, E.HfHubHTTPError):
        status = getattr(getattr(e, "response", None), "status_code", None)
        return SymgptError(f"the Hub refused {what} of {hub_id}" + (f" (HTTP {status})" if status else ""))
    if isinstance(e, _connection_errors()):
        return SymgptError(f"cannot reach the Hub for {what} of {hub_id} (no network?)")
    return None


def download(repo_id: str, filename: str, revision: str | None) -> str:
    """``huggingface_hub.hf_hub_download``: the path of *filename* in the user's HF cache (a
    module-level function, so that tests can replace it)."""
    from huggingface_hub import hf_hub_download

    return hf_hub_download(repo_id, filename, revision=revision)


class QuietHub:
    """huggingface_hub's retry warnings and progress bars off for one call (the answer, or one
    error line, is all a command prints), restored after it."""

    def __enter__(self):
        import logging

        import huggingface_hub.file_download  # noqa: F401  (its import configures the library's logger)
        from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars
        from huggingface_hub.utils import logging as hf_logging

        self.logger = hf_logging.get_logger("huggingface_hub")
        self.level = self.logger.level
        self.bars_off = are_progress_bars_disabled()
        self.logger.setLevel(logging.ERROR)
        disable_progress_bars()
        return self

    def __exit__(self, *exc):
        from huggingface_hub.utils import enable_progress_bars

        self.logger.setLevel(self.level)
        if not self.bars_off:
            enable_progress_bars()
        return False


def fetch(hub_id: HubId, filename: str) -> str:
    """The local path of *filename* of the repository, through the HF cache; one-line errors."""
    try:
        with QuietHub():
            return download(hub_id.repo, filename, hub_id.revision)
    except Exception as e:
        err = hub_error(e, hub_id, filename)
        if err is None:
            raise
        raise err from None


def config_path(hub_id: HubId):
    """The ``config.json`` of *hub_id* in the HF cache (downloaded if need be)."""
    from pathlib import Path

    return Path(fetch(hub_id, "config.json"))

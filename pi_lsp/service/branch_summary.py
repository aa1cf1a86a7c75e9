"""``pi/navigate`` with ``summarize``: pi's ``navigateTree`` with a summary of the abandoned branch.

The session is marked as running its one long operation when the request arrives, before any
await (so a second one, or a prompt, gets SessionBusy, and one arriving while a run or compaction
goes on gets it too); the entries to summarise are collected under the session's lock, summarised
outside it, and the ``branch_summary``
is appended and the leaf moved under the lock again, only if nothing moved meanwhile. With nothing
abandoned it is a plain navigation, as in pi.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pi_lsp.llm import generate_branch_summary
from pi_lsp.service import entries as ops
from pi_lsp.service import navigate as nav
from pi_lsp.service.compaction_config import RunConfig
from pi_lsp.service.errors import SessionBusy
from pi_lsp.service.host import SessionHost
from pi_lsp.service.model_choice import context_window
from pi_lsp.service.registry import Client
from pi_lsp.service.summarizing import check_unchanged, summarise_off_loop, summarizer_for

Plan = tuple[nav.NavigationPlan, list[dict[str, Any]], Mapping[str, Any] | None, RunConfig]


class BranchSummaryService:
    """Navigation with a branch summary; one per server process (built by ``build_service``)."""

    def __init__(self, host: SessionHost) -> None:
        self.host = host

    async def navigate_with_summary(
        self,
        client: Client,
        session_id: str | None,
        target_id: str,
        custom_instructions: str | None,
        replace_instructions: bool,
        label: str | None,
    ) -> dict[str, Any]:
        session = self.host.registry.resolve(client, session_id)
        settings = client.settings
        manager = session.manager

        def plan_it() -> Plan | None:
            plan = nav.plan_navigation(manager, target_id)
            if plan.noop or not plan.entries_to_summarize:
                return None
            entries = [record.entry() for record in plan.entries_to_summarize]
            config = RunConfig.from_settings(settings, context_window(manager, settings))
            return plan, entries, manager.context_view().model, config

        with session.exclusive("branch summary"):  # checked and marked before any await
            planned = await self.host.run(session, plan_it, writes=False)
            if planned is None:  # nothing abandoned: exactly as without summarize (pi does the same)
                moved: dict[str, Any] = await self.host.call(
                    client, session.id, ops.navigate, target_id, label, writes=True
                )
                return moved
            plan, entries, branch_model, config = planned
            async with summarizer_for(config, branch_model) as summarizer:
                summary = await summarise_off_loop(
                    summarizer,
                    lambda: generate_branch_summary(
                        entries,
                        summarizer,
                        context_window=config.context_window,
                        reserve_tokens=config.branch_reserve_tokens,
                        custom_instructions=custom_instructions,
                        replace_instructions=replace_instructions,
                    ),
                    self.host.in_thread,
                )

            def write() -> ops.Outcome:
                check_unchanged(self.host.registry, session, plan.old_leaf_id, "branch summary")
                if manager.leaf_id != plan.old_leaf_id:
                    raise SessionBusy(
                        f"session {session.id} changed during the branch summary;"
                        " nothing was written (try again)",
                        {"conflict": True},
                    )
                fresh = nav.plan_navigation(manager, target_id)
                done = nav.navigate_with_summary(
                    manager, fresh, summary["summary"], dict(summary["details"]), label
                )
                return done.to_wire(), ops.Change("navigate", done.appended_ids)

            result, change = await self.host.run(session, write, writes=True)
        if change is not None:
            self.host.emit(session, change)
        return result  # type: ignore[no-any-return]

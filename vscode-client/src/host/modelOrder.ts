/**
 * The model picker's order: the current model on top, then the families (Opus, Sonnet, Haiku, …)
 * each together, the family with the newest model first, and within a family newest first.
 */
import type { ModelChoice } from "../shared/chatProtocol";

const FAMILIES = ["opus", "sonnet", "haiku"];

/** The family of a model id ("claude-3-5-sonnet-20241022" → "Sonnet"); "Other" when none is named. */
export function modelFamily(id: string): string {
  const family = FAMILIES.find((name) => id.split("-").includes(name));
  return family === undefined ? "Other" : family[0].toUpperCase() + family.slice(1);
}

/** How new a model is: its version (4.5 → [4, 5]), then its date (an undated alias counts as newest). */
function recency(id: string): number[] {
  const parts = id.split("-").filter((part) => /^\d+$/.test(part));
  const date = parts.find((part) => part.length === 8);
  const version = parts.filter((part) => part.length < 8).map(Number);
  return [version[0] ?? 0, version[1] ?? 0, date === undefined ? 99_999_999 : Number(date)];
}

function newerFirst(a: string, b: string): number {
  const [x, y] = [recency(a), recency(b)];
  for (let i = 0; i < x.length; i += 1) if (x[i] !== y[i]) return y[i] - x[i];
  return a.localeCompare(b);
}

/** The models in picker order, each with its family (the picker groups by it). */
export function orderModels(models: readonly ModelChoice[], currentId: string): (ModelChoice & { family: string })[] {
  const byFamily = new Map<string, ModelChoice[]>();
  for (const model of models) {
    const family = modelFamily(model.id);
    byFamily.set(family, [...(byFamily.get(family) ?? []), model]);
  }
  const groups = [...byFamily.entries()].map(([family, members]) => ({ family, members: members.sort((a, b) => newerFirst(a.id, b.id)) }));
  groups.sort((a, b) => newerFirst(a.members[0].id, b.members[0].id));
  const ordered = groups.flatMap(({ family, members }) => members.map((model) => ({ ...model, family })));
  const current = ordered.findIndex((model) => model.id === currentId);
  if (current > 0) ordered.unshift(...ordered.splice(current, 1));
  return ordered;
}

// A match: played (for the seats whose tokens this browser holds) or
// watched, live over WatchGame. The board is the server's own picture
// (GET /games/{id}/board.svg, one renderer for every variant); a click
// on its points picks a checker and where it goes, among the plays the
// dice allow, and a play the clicks leave no doubt about is sent.
import {
  type CheckerMove,
  DoubleAction,
  ResignationMode,
  type Game,
  Geometry,
  Phase,
  type Play,
  ResignAction,
  Seat,
} from "./gen/backgammon/v1/backgammon_pb";
import { api, as, said, tokenFor } from "./api";
import { button, el, notice, page } from "./dom";

type View = {
  id: string;
  game?: Game;
  /// The moves picked so far (mover's numbering), and the checker picked.
  chosen: CheckerMove[];
  from?: number;
  stop?: AbortController;
  ticker?: number;
};

let current: View | undefined;

/// Leaves the match on screen: its stream and clock stop.
export function leave(): void {
  current?.stop?.abort();
  if (current?.ticker) clearInterval(current.ticker);
  current = undefined;
}

export async function game(id: string): Promise<void> {
  leave();
  const view: View = { id, chosen: [], stop: new AbortController() };
  current = view;
  const main = page();
  main.append(
    el("div", { id: "status", class: "status" }),
    el("div", { id: "clock", class: "clock" }),
    el("div", { id: "board", class: "board" }),
    el("div", { id: "actions", class: "actions" }),
    el("div", { id: "plays", class: "plays" }),
    el("p", {}, el("a", { href: `#/review/${id}`, id: "review-link" }, "Review this match")),
  );
  try {
    view.game = await api.getGame({ gameId: id });
  } catch (e) {
    notice(said(e), "error");
    return;
  }
  await show(view);
  view.ticker = window.setInterval(() => tick(view), 100);
  follow(view);
}

/// Follows the match live: each update redraws it.
async function follow(view: View): Promise<void> {
  while (current === view) {
    try {
      const from = view.game?.version ?? 0n;
      for await (const update of api.watchGame(
        { gameId: view.id, fromVersion: from },
        { signal: view.stop!.signal },
      )) {
        if (current !== view) return;
        if (update.version <= (view.game?.version ?? 0n)) continue;
        view.game = update.game ?? (await api.getGame({ gameId: view.id }));
        view.chosen = [];
        view.from = undefined;
        await show(view);
      }
    } catch (e) {
      if (current !== view || view.stop!.signal.aborted) return;
      // The stream ended (a restart, the network): read again and go on.
      await new Promise((r) => setTimeout(r, 1000));
      try {
        view.game = await api.getGame({ gameId: view.id });
        await show(view);
      } catch {
        // Still away: the loop tries again.
      }
    }
  }
}

/// Whose turn it is, or how the match ended, in words.
function statusOf(g: Game): string {
  const name = (s: Seat) => (s === Seat.WHITE ? "White" : s === Seat.BLACK ? "Black" : "Nobody");
  if (g.phase === Phase.MATCH_OVER) {
    const last = g.results[g.results.length - 1];
    const how: Record<string, string> = {
      time: " on time",
      resigned: " by resignation",
      dropped: " (a double passed)",
      played: "",
    };
    const why = last ? (how[last.reason] ?? ` (${last.reason})`) : "";
    return g.matchWinner === Seat.WHITE || g.matchWinner === Seat.BLACK
      ? `Match over: ${name(g.matchWinner)} wins${why}`
      : "Match over: a tie";
  }
  const who = name(g.toAct);
  const mine = tokenFor(g.gameId, g.toAct) ? " (you)" : "";
  switch (g.phase) {
    case Phase.ROLL:
      return `${who}${mine} to roll`;
    case Phase.MOVE:
      return `${who}${mine} to move ${g.dice?.die1}-${g.dice?.die2}`;
    case Phase.CUBE_OFFERED:
      return `${who}${mine} to take or pass the double`;
    case Phase.RESIGNATION_OFFERED:
      return `${who}${mine} to accept or decline the resignation`;
    case Phase.DECISION:
      return `${who}${mine}: ${g.decision?.prompt ?? "to decide"}`;
    default:
      return "";
  }
}

async function show(view: View): Promise<void> {
  const g = view.game!;
  const board = document.getElementById("board")!;
  const response = await fetch(`/games/${encodeURIComponent(view.id)}/board.svg?version=${g.version}`);
  const picture = response.ok ? await response.text() : undefined;
  if (current !== view || view.game !== g) return;
  if (picture !== undefined) {
    board.innerHTML = picture;
    board.querySelectorAll("g.point, g.bar, g.off").forEach((p) =>
      p.addEventListener("click", () => clicked(view, p as SVGGElement)),
    );
  } else {
    notice(await response.text(), "error");
  }
  mark(view);
  actions(view);
  tick(view);
  // Last: the status says the version shown once all of it is drawn.
  const status = document.getElementById("status")!;
  status.textContent = statusOf(g);
  status.dataset.phase = Phase[g.phase];
  status.dataset.version = String(g.version);
  delete status.dataset.sending;
}

/// The clocks, counted down between updates.
function tick(view: View): void {
  const c = view.game?.clock;
  const out = document.getElementById("clock");
  if (!c || !out) return;
  const asOf = c.asOf ? Number(c.asOf.seconds) * 1000 + c.asOf.nanos / 1e6 : Date.now();
  const spent = Math.max(0, Date.now() - asOf - Number(c.delayLeftMs));
  const left = (seat: Seat, ms: bigint) =>
    Math.max(0, Number(ms) - (c.running === seat && view.game?.phase !== Phase.MATCH_OVER ? spent : 0));
  const fmt = (ms: number) => {
    const s = Math.floor(ms / 1000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  };
  out.textContent = `White ${fmt(left(Seat.WHITE, c.whiteMs))}  ·  Black ${fmt(left(Seat.BLACK, c.blackMs))}`;
}

/// Where a point of the picture (white's numbering; 25 the bar, 0 off)
/// is in the mover's numbering.
function moversPoint(g: Game, white: number): number {
  if (g.turn !== Seat.BLACK || white === 0 || white === 25) return white;
  if (g.geometry === Geometry.SAME_WAY) return white <= 12 ? white + 12 : white - 12;
  return 25 - white;
}

function whitePoint(g: Game, movers: number): number {
  return moversPoint(g, movers);
}

/// The plays still open after the moves chosen.
function open(view: View): Play[] {
  return view.game!.legalPlays.filter((p) => rest(p, view.chosen) !== undefined);
}

/// A play's moves less `chosen` (undefined: `chosen` is not in it).
function rest(play: Play, chosen: CheckerMove[]): CheckerMove[] | undefined {
  const left = [...play.moves];
  for (const m of chosen) {
    const i = left.findIndex((l) => l.from === m.from && l.to === m.to);
    if (i < 0) return undefined;
    left.splice(i, 1);
  }
  return left;
}

/// The moves of a play that take one checker from `from` to `to`, in
/// order (one die or several), if the play has them after `chosen`.
function chain(play: Play, chosen: CheckerMove[], from: number, to: number): CheckerMove[] | undefined {
  const left = rest(play, chosen);
  if (!left) return undefined;
  const walk = (at: number, pool: CheckerMove[], path: CheckerMove[]): CheckerMove[] | undefined => {
    if (at === to && path.length > 0) return path;
    for (let i = 0; i < pool.length; i++) {
      if (pool[i].from !== at) continue;
      const next = [...pool.slice(0, i), ...pool.slice(i + 1)];
      const found = walk(pool[i].to, next, [...path, pool[i]]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(from, left, []);
}

function clicked(view: View, target: SVGGElement): void {
  const g = view.game!;
  if (g.phase !== Phase.MOVE || !tokenFor(g.gameId, g.toAct)) return;
  const point = target.classList.contains("bar")
    ? 25
    : target.classList.contains("off")
      ? 0
      : moversPoint(g, Number(target.dataset.point));
  const plays = open(view);
  if (view.from === undefined) {
    if (plays.some((p) => rest(p, view.chosen)!.some((m) => m.from === point))) {
      view.from = point;
    } else {
      notice("No checker the dice allow to move from there.", "error");
    }
    mark(view);
    return;
  }
  if (point === view.from) {
    view.from = undefined;
    mark(view);
    return;
  }
  const path = plays.map((p) => chain(p, view.chosen, view.from!, point)).find((c) => c !== undefined);
  if (!path) {
    notice("The dice do not take that checker there.", "error");
    return;
  }
  notice("");
  view.chosen.push(...path);
  view.from = undefined;
  decideIfSure(view);
}

/// Sends the play once the moves chosen leave only one (or use a whole
/// play): a unique completion is made for you.
function decideIfSure(view: View): void {
  const plays = open(view);
  const complete = plays.find((p) => rest(p, view.chosen)!.length === 0);
  const notations = new Set(plays.map((p) => p.notation));
  if (complete) send(view, complete.notation);
  else if (notations.size === 1) send(view, plays[0].notation);
  else mark(view);
}

/// Marks the picked checker and where the chosen moves went.
function mark(view: View): void {
  const g = view.game!;
  document.querySelectorAll("#board g.point").forEach((p) => p.classList.remove("picked", "moved"));
  const at = (movers: number) =>
    document.querySelector(`#board g.point[data-point="${whitePoint(g, movers)}"]`);
  if (view.from !== undefined) at(view.from)?.classList.add("picked");
  for (const m of view.chosen) at(m.to)?.classList.add("moved");
  // What the clicks have chosen so far (for the eye, and for tests).
  document.getElementById("status")!.dataset.chosen = String(view.chosen.length);
  const plays = document.getElementById("plays")!;
  plays.replaceChildren();
  if (g.phase === Phase.MOVE && tokenFor(g.gameId, g.toAct)) {
    const list = open(view);
    plays.append(el("h3", {}, `Plays the dice allow (${list.length})`));
    const ul = el("ul", { class: "play-list" });
    // Each play's moves in the picture's numbering (bar, off), for a
    // person's eye and for the browser tests' clicks.
    const shown = (m: CheckerMove) =>
      `${m.from === 25 ? "bar" : whitePoint(g, m.from)}/${m.to === 0 ? "off" : whitePoint(g, m.to)}`;
    for (const p of list) {
      ul.append(
        el(
          "li",
          {},
          button(p.notation || "(no move)", () => send(view, p.notation), {
            class: "play",
            "data-moves": p.moves.map(shown).join(" "),
          }),
        ),
      );
    }
    plays.append(ul);
  }
}

function requestId(): string {
  return crypto.randomUUID();
}

async function send(view: View, notation: string): Promise<void> {
  const g = view.game!;
  document.getElementById("status")!.dataset.sending = "1";
  const token = tokenFor(g.gameId, g.toAct)!;
  await act(view, () =>
    api.move(
      { gameId: g.gameId, expectedVersion: g.version, requestId: requestId(), notation },
      as(token),
    ),
  );
}

/// Runs an action; its answer (or the watch) redraws the match.
async function act(view: View, call: () => Promise<Game>): Promise<void> {
  try {
    const next = await call();
    if (current === view && next.version > (view.game?.version ?? 0n)) {
      view.game = next;
      view.chosen = [];
      view.from = undefined;
      await show(view);
    }
    notice("");
  } catch (e) {
    notice(said(e), "error");
  }
}

/// The buttons of what the seat to act may do now.
function actions(view: View): void {
  const g = view.game!;
  const box = document.getElementById("actions")!;
  box.replaceChildren();
  const token = tokenFor(g.gameId, g.toAct);
  if (!token || g.phase === Phase.MATCH_OVER) {
    if (!token && g.phase !== Phase.MATCH_OVER) box.append(el("span", {}, "Watching"));
    return;
  }
  const base = { gameId: g.gameId, expectedVersion: g.version };
  const id = () => ({ ...base, requestId: requestId() });
  const double = (action: DoubleAction) => () => act(view, () => api.double({ ...id(), action }, as(token)));
  switch (g.phase) {
    case Phase.ROLL:
      box.append(button("Roll", () => act(view, () => api.roll(id(), as(token))), { id: "roll" }));
      if (g.cube?.mayDouble) box.append(button("Double", double(DoubleAction.OFFER), { id: "double" }));
      break;
    case Phase.MOVE: {
      const input = el("input", { id: "notation", placeholder: "e.g. 13/7 8/7", size: "16" });
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter") send(view, input.value.trim());
      });
      box.append(
        input,
        button("Play", () => send(view, input.value.trim())),
        button("Undo", () => {
          view.chosen = [];
          view.from = undefined;
          mark(view);
        }),
      );
      break;
    }
    case Phase.CUBE_OFFERED:
      box.append(
        button("Take", double(DoubleAction.TAKE), { id: "take" }),
        button("Pass", double(DoubleAction.DROP), { id: "pass" }),
      );
      if (g.pendingDouble?.beaver) box.append(button("Beaver", double(DoubleAction.BEAVER)));
      break;
    case Phase.RESIGNATION_OFFERED: {
      const resign = (action: ResignAction) => () =>
        act(view, () => api.resign({ ...id(), action, level: 0 }, as(token)));
      box.append(
        button("Accept", resign(ResignAction.ACCEPT)),
        button("Decline", resign(ResignAction.DECLINE)),
      );
      break;
    }
    case Phase.DECISION:
      for (const choice of g.decision?.choices ?? []) {
        box.append(
          button(choice, () => act(view, () => api.decide({ ...id(), choice }, as(token))), {
            class: "choice",
          }),
        );
      }
      break;
  }
  if (g.phase === Phase.ROLL || g.phase === Phase.MOVE) {
    const resign = (level: number) => () =>
      act(view, () => api.resign({ ...id(), action: ResignAction.RESIGN, level }, as(token)));
    if (g.settings?.resignation === ResignationMode.OFFER) {
      // An offer at a level, which the other seat accepts or declines.
      ["single", "gammon", "backgammon"].forEach((name, i) =>
        box.append(button(`Offer to resign (${name})`, resign(i + 1), { class: "resign-offer" })),
      );
    } else {
      box.append(button("Resign", resign(0), { id: "resign" }));
    }
    if (g.settings?.hints) {
      box.append(button("Hint", () => hint(view, token), { id: "hint" }));
    }
  }
}

/// The computer player's view of the position (the match allows hints):
/// the best plays with their equities, or the cube's advice.
async function hint(view: View, token: string): Promise<void> {
  const g = view.game!;
  const out = document.getElementById("plays")!;
  try {
    const h = await api.hint({ gameId: g.gameId }, as(token));
    const lines = h.plays
      .slice(0, 5)
      .map((p) => `${p.play?.notation || "(no move)"}  ${p.equity.toFixed(3)}${p.equityLoss > 0 ? ` (−${p.equityLoss.toFixed(3)})` : ""}`);
    if (h.cube) lines.unshift(`Cube: ${h.cube.action} (equity ${h.cube.equity.toFixed(3)})`);
    for (const c of h.choices) lines.push(`${c.choice}  ${c.equity.toFixed(3)}`);
    out.prepend(el("pre", { id: "hint-out" }, lines.join("\n") || "No advice for this position."));
  } catch (e) {
    notice(said(e), "error");
  }
}

// A match reviewed: every version of its board to step through, the
// service's judgement of each decision (AnalyzeMatch) as a graph of the
// equity lost, the mistakes marked and clickable, and the record to
// download (JSON, .mat, SGF).
import { type AnalyzedDecision, RecordFormat, Seat } from "./gen/backgammon/v1/backgammon_pb";
import { api, said } from "./api";
import { button, el, notice, page } from "./dom";

/// Equity lost from which a decision is a mistake (gnubg's "doubtful" is
/// 0.04 in normalised equity).
const MISTAKE = 0.04;

export async function review(id: string): Promise<void> {
  const main = page();
  let last: number;
  try {
    last = Number((await api.getGame({ gameId: id })).version);
  } catch (e) {
    notice(said(e), "error");
    return;
  }
  let at = last;
  const board = el("div", { id: "review-board", class: "board" });
  const where = el("span", { id: "review-version" });
  const told = el("p", { id: "review-decision" });
  const showVersion = async (v: number) => {
    at = Math.min(Math.max(1, v), last);
    where.textContent = `version ${at} of ${last}`;
    const r = await fetch(`/games/${encodeURIComponent(id)}/board.svg?version=${at}`);
    board.innerHTML = r.ok ? await r.text() : "";
    if (!r.ok) notice(await r.text(), "error");
  };
  const graph = el("div", { id: "graph" });
  const downloads = el("div", { class: "downloads" });
  for (const [label, format] of [
    ["JSON", RecordFormat.JSON],
    [".mat", RecordFormat.MAT],
    ["SGF", RecordFormat.SGF],
  ] as const) {
    downloads.append(
      button(`Download ${label}`, async () => {
        try {
          const r = await api.exportMatch({ gameId: id, format });
          const a = el("a", {
            href: URL.createObjectURL(new Blob([r.text], { type: "text/plain" })),
            download: r.fileName,
          });
          a.click();
        } catch (e) {
          notice(said(e), "error");
        }
      }),
    );
  }
  main.append(
    el("h2", {}, "Review"),
    el(
      "div",
      { class: "steps" },
      button("⏮", () => showVersion(1)),
      button("◀", () => showVersion(at - 1), { id: "back" }),
      where,
      button("▶", () => showVersion(at + 1), { id: "forward" }),
      button("⏭", () => showVersion(last)),
    ),
    board,
    told,
    graph,
    downloads,
    el("p", {}, el("a", { href: `#/game/${id}` }, "Back to the match")),
  );
  await showVersion(last);
  try {
    const analysis = await api.analyzeMatch({ gameId: id });
    drawGraph(graph, analysis.decisions, async (d) => {
      // The board the decision was made on: the version before it.
      await showVersion(Number(d.version) - 1);
      const who = d.seat === Seat.WHITE ? "White" : "Black";
      const did = d.played?.notation || d.action;
      const best = d.best?.notation || d.bestAction;
      told.textContent = `${who} ${did}; best ${best}; lost ${d.equityLost.toFixed(3)}`;
    });
  } catch (e) {
    graph.textContent = `No analysis: ${said(e)}`;
  }
}

/// The equity lost by each decision, in order: a bar each, white's up and
/// black's down, the mistakes marked with a dot that jumps to them.
function drawGraph(
  into: HTMLElement,
  decisions: AnalyzedDecision[],
  jump: (d: AnalyzedDecision) => void,
): void {
  const ns = "http://www.w3.org/2000/svg";
  const width = 800;
  const height = 200;
  const mid = height / 2;
  const most = Math.max(0.1, ...decisions.map((d) => d.equityLost));
  const w = width / Math.max(1, decisions.length);
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("class", "graph");
  const axis = document.createElementNS(ns, "line");
  Object.entries({ x1: "0", x2: String(width), y1: String(mid), y2: String(mid), stroke: "#888" }).forEach(
    ([k, v]) => axis.setAttribute(k, v),
  );
  svg.append(axis);
  decisions.forEach((d, i) => {
    const h = (d.equityLost / most) * (mid - 10);
    const up = d.seat === Seat.WHITE;
    const bar = document.createElementNS(ns, "rect");
    Object.entries({
      x: String(i * w),
      y: String(up ? mid - h : mid),
      width: String(Math.max(1, w - 1)),
      height: String(h),
      fill: up ? "#c9a86a" : "#2a2623",
    }).forEach(([k, v]) => bar.setAttribute(k, v));
    svg.append(bar);
    if (d.equityLost >= MISTAKE) {
      const dot = document.createElementNS(ns, "circle");
      Object.entries({
        cx: String(i * w + w / 2),
        cy: String(up ? mid - h - 6 : mid + h + 6),
        r: "5",
        fill: "#d33",
        class: "mistake",
        "data-version": String(d.version),
      }).forEach(([k, v]) => dot.setAttribute(k, v));
      dot.addEventListener("click", () => jump(d));
      svg.append(dot);
    }
  });
  into.replaceChildren(
    el("h3", {}, `Equity lost per decision (${decisions.length} decisions; dots: mistakes)`),
    svg,
  );
}

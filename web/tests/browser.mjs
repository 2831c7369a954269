// The web client in a real browser: Debian's chromium, driven by npm's
// playwright-core (nothing downloaded at run time). Run by the Rust test
// crates/server/tests/browser.rs, which starts the server, prepares the
// matches below through the API, and checks what this prints against
// the server:
//
//   BROWSER_SERVER  the server's URL (it serves the page and the API)
//   CHROMIUM        the browser (default /usr/bin/chromium)
//   BROWSER_PLAN    a JSON file: { clockGame, boards: [{ variant, gameId,
//                   version, board }], screenshot? }
//
// Each scenario prints one JSON line; any failure exits non-zero.
import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const server = process.env.BROWSER_SERVER;
const plan = JSON.parse(readFileSync(process.env.BROWSER_PLAN, "utf8"));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
const say = (what) => console.log(JSON.stringify(what));
const fail = (why) => {
  throw new Error(why);
};

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1000, height: 1150 } });
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  return page;
}

const version = async (page) => Number(await page.getAttribute("#status", "data-version"));
const phase = (page) => page.getAttribute("#status", "data-phase");

/// Waits until the page shows a version other than `from`.
async function moved(page, from, ms = 15000) {
  await page.waitForFunction(
    (v) => Number(document.querySelector("#status")?.dataset.version) !== v,
    from,
    { timeout: ms },
  );
}

/// Clicks a place of the board: a point's number, "bar" or "off".
async function clickPlace(page, place) {
  const selector =
    place === "bar" ? "#board g.bar" : place === "off" ? "#board g.off[data-seat]" : `#board g.point[data-point="${place}"]`;
  // The tray of the seat moving: white's at the bottom, black's at the top.
  const target =
    place === "off"
      ? `#board g.off[data-seat="${(await page.textContent("#status")).startsWith("White") ? "white" : "black"}"]`
      : selector;
  // A real mouse click at the element; `force` skips waiting for it to
  // hold still over animation frames, which a loaded CI machine may not
  // give an SVG group in time.
  await page.locator(target).click({ force: true, timeout: 10000 });
}

// 1. A person plays a 1-point match against the computer by clicking,
//    while a second page watches it.
async function playAgainstTheComputer() {
  const page = await newPage();
  await page.goto(`${server}/`);
  await page.waitForSelector("#start");
  await page.fill("#length", "1");
  await page.selectOption("#opponent", "computer");
  await page.check("#hints");
  await page.click("#start");
  await page.waitForSelector("#board svg");
  const gameId = page.url().split("/").pop();
  const watcher = await newPage();
  await watcher.goto(`${server}/#/game/${gameId}`);
  await watcher.waitForSelector("#board svg");
  const lags = [];
  let clicks = 0;
  let shot = false;
  let hinted = "";
  for (let turn = 0; turn < 400; turn++) {
    const now = await version(page);
    const p = await phase(page);
    if (p === "MATCH_OVER") break;
    if (p === "ROLL") {
      await page.click("#roll");
    } else if (p === "MOVE") {
      if (!hinted) {
        // The match allows hints: the computer's ranking, shown.
        await page.click("#hint");
        await page.waitForSelector("#hint-out");
        hinted = (await page.textContent("#hint-out")).split("\n")[0];
      }
      const play = await page.$("button.play");
      if (!play) fail("no play offered in the move phase");
      const moves = (await play.getAttribute("data-moves")).split(" ").filter(Boolean);
      if (moves.length === 0) {
        await play.click();
      }
      let chosen = 0;
      for (const m of moves) {
        const [from, to] = m.split("/");
        await clickPlace(page, from);
        await clickPlace(page, to);
        clicks += 2;
        chosen += 1;
        // The page took the move (marked it), or sent the play it leaves
        // no doubt about: then the board is redrawn, and clicking stops.
        await page.waitForFunction(
          ([v, n]) => {
            const s = document.querySelector("#status")?.dataset ?? {};
            return Number(s.version) !== v || s.sending === "1" || Number(s.chosen) >= n;
          },
          [Number(now), chosen],
          { timeout: 10000 },
        );
        const s = await page.$eval("#status", (e) => ({ ...e.dataset }));
        if (Number(s.version) !== now || s.sending === "1") break;
      }
    } else if (p === "CUBE_OFFERED") {
      await page.click("#take");
    } else if (p === "DECISION") {
      await page.click("button.choice");
    } else {
      await page.waitForTimeout(100);
      continue;
    }
    await moved(page, now);
    // The watcher shows each new version within a second.
    const target = await version(page);
    const t0 = Date.now();
    await watcher.waitForFunction(
      (v) => Number(document.querySelector("#status")?.dataset.version) >= v,
      target,
      { timeout: 1000 },
    );
    lags.push(Date.now() - t0);
    if (!shot && plan.screenshot && turn >= 4 && (await phase(page)) === "MOVE") {
      await page.screenshot({ path: plan.screenshot });
      shot = true;
    }
  }
  if ((await phase(page)) !== "MATCH_OVER") fail("the match did not end");
  const status = await page.textContent("#status");
  const watched = await watcher.textContent("#status");
  if (watched !== status) fail(`the watcher shows ${watched}, the player ${status}`);
  lags.sort((a, b) => a - b);
  say({
    played: { gameId, status, clicks, hint: hinted, updates: lags.length, watcher_lag_max_ms: lags[lags.length - 1] },
  });
  return { page, gameId };
}

// 2. A clock runs out while a page watches: the page shows the loss on time.
async function clockRunsOut() {
  const page = await newPage();
  await page.goto(`${server}/#/game/${plan.clockGame}`);
  await page.waitForFunction(() => /on time/.test(document.querySelector("#status")?.textContent ?? ""), null, {
    timeout: 30000,
  });
  say({ clock: { status: await page.textContent("#status"), clock: await page.textContent("#clock") } });
}

// 3. The finished match's review: the graph, and a mistake jumped to.
async function review(page, gameId) {
  await page.goto(`${server}/#/review/${gameId}`);
  await page.waitForSelector("#graph svg", { timeout: 60000 });
  const mistakes = await page.$$("#graph .mistake");
  if (mistakes.length === 0) fail("no mistake marked in the review");
  const before = await page.textContent("#review-version");
  const at = Number(await mistakes[0].getAttribute("data-version"));
  await mistakes[0].click();
  await page.waitForFunction(() => (document.querySelector("#review-decision")?.textContent ?? "") !== "");
  const after = await page.textContent("#review-version");
  if (!after.startsWith(`version ${at - 1} `)) fail(`jumped to ${after}, not before version ${at}`);
  const board = await page.getAttribute("#review-board svg", "data-version");
  say({ review: { mistakes: mistakes.length, before, after, board, told: await page.textContent("#review-decision") } });
}

// 4. Every shipped variant's boards, read back from the page's picture.
async function boards() {
  const page = await newPage();
  for (const b of plan.boards) {
    await page.goto(`${server}/#/game/${b.gameId}`);
    await page.waitForSelector(`#board svg[data-version="${b.version}"]`);
    const drawn = await page.$$eval("#board g.point", (points) =>
      points.map((p) => Number(p.dataset.white) - Number(p.dataset.black)),
    );
    const bar = await page.$eval("#board g.bar", (g) => [Number(g.dataset.white), Number(g.dataset.black)]);
    const off = await page.$$eval("#board g.off", (gs) =>
      Object.fromEntries(gs.map((g) => [g.dataset.seat, Number(g.dataset.off)])),
    );
    const want = b.board;
    const same =
      JSON.stringify(drawn) === JSON.stringify(want.points) &&
      bar[0] === want.whiteBar &&
      bar[1] === want.blackBar &&
      off.white === want.whiteOff &&
      off.black === want.blackOff;
    if (!same) fail(`${b.variant} version ${b.version}: drawn ${JSON.stringify({ drawn, bar, off })}, GetGame ${JSON.stringify(want)}`);
    say({ board: { variant: b.variant, version: b.version } });
  }
}

// 5. gRPC-Web from another origin is refused by the browser (no origin
//    is listed): the preflight gets no CORS answer.
async function otherOrigin() {
  const page = await newPage();
  await page.goto("about:blank");
  const outcome = await page.evaluate(async (url) => {
    try {
      await fetch(`${url}/backgammon.v1.GameService/ListVariants`, {
        method: "POST",
        headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
        body: new Uint8Array([0, 0, 0, 0, 0]),
      });
      return "answered";
    } catch (e) {
      return `refused: ${e}`;
    }
  }, server);
  if (!outcome.startsWith("refused")) fail(`a page of another origin called the API: ${outcome}`);
  say({ cors: outcome });
}

try {
  await clockRunsOut();
  const { page, gameId } = await playAgainstTheComputer();
  await review(page, gameId);
  await boards();
  await otherOrigin();
} finally {
  await browser.close();
}

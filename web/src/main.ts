// The web client backgammond serves (docs/web.md): routes by the URL's
// fragment, so every page is a link.
//   #/                      start a match, or watch one by id
//   #/game/ID               play (the seats this browser holds) or watch
//   #/join/ID/SEAT/TOKEN    a friend's link: keep the seat, then play
//   #/review/ID             step through a match, its analysis graph
import { game, leave } from "./game";
import { home, join } from "./home";
import { review } from "./review";
import { notice } from "./dom";

function route(): void {
  notice("");
  leave();
  const [what, id, ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  if (what === "game" && id) game(id);
  else if (what === "join" && id && rest.length === 2) join(id, rest[0], rest[1]);
  else if (what === "review" && id) review(id);
  else home();
}

window.addEventListener("hashchange", route);
route();

// The start page: a new match against the service's computer player or
// a friend (a link gives the friend the other seat), or a match to watch
// by its id.
import { Seat, type Variant } from "./gen/backgammon/v1/backgammon_pb";
import { api, keepToken, said } from "./api";
import { button, el, notice, page } from "./dom";

export async function home(): Promise<void> {
  const main = page();
  let variants: Variant[] = [];
  try {
    variants = (await api.listVariants({})).variants.filter((v) => !v.unhealthy);
  } catch (e) {
    notice(said(e), "error");
    return;
  }
  const variant = el("select", { id: "variant" });
  for (const v of variants) variant.append(el("option", { value: v.name }, v.name));
  if (variants.some((v) => v.name === "standard")) variant.value = "standard";
  const length = el("input", { id: "length", type: "number", min: "0", value: "1", size: "4" });
  const opponent = el("select", { id: "opponent" });
  opponent.append(
    el("option", { value: "computer" }, "the computer"),
    el("option", { value: "friend" }, "a friend (share a link)"),
  );
  const level = el("select", { id: "level" });
  const minutes = el("input", { id: "minutes", type: "number", min: "0", value: "0", size: "4" });
  const hints = el("input", { id: "hints", type: "checkbox" });
  // The variant's own options, each as it declares it: a choice among
  // its allowed values, or free text.
  const options = el("div", { id: "options", class: "form" });
  const optionInputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
  const levels = () => {
    const v = variants.find((x) => x.name === variant.value);
    level.replaceChildren(...(v?.botLevels ?? []).map((l) => el("option", { value: l }, l)));
    level.value = v?.botLevels[v.botLevels.length - 1] ?? "";
    optionInputs.clear();
    options.replaceChildren();
    for (const o of v?.options ?? []) {
      let input: HTMLInputElement | HTMLSelectElement;
      if (o.allowedValues.length > 0) {
        input = el("select", { name: o.name });
        for (const a of o.allowedValues) input.append(el("option", { value: a }, a));
      } else {
        input = el("input", { name: o.name, size: "8" });
      }
      input.value = o.defaultValue;
      optionInputs.set(o.name, input);
      options.append(el("label", { title: o.description }, `${o.name} `, input));
    }
  };
  variant.addEventListener("change", levels);
  levels();
  const start = async () => {
    const v = variants.find((x) => x.name === variant.value);
    const computer = opponent.value === "computer" && (v?.botLevels.length ?? 0) > 0;
    const reserve = BigInt(Math.round(Number(minutes.value || "0") * 60_000));
    try {
      const made = await api.newGame({
        variant: variant.value,
        requestId: crypto.randomUUID(),
        options: Object.fromEntries([...optionInputs].map(([name, input]) => [name, input.value])),
        settings: {
          matchLength: Number(length.value || "0"),
          clock: reserve > 0n ? { reserveMs: reserve } : undefined,
          hints: hints.checked,
        },
        bots: computer ? [{ seat: Seat.BLACK, level: level.value }] : [],
      });
      const id = made.game!.gameId;
      keepToken(id, Seat.WHITE, made.whiteToken);
      if (!computer) {
        sessionStorage.setItem(`invite.${id}`, `${location.origin}/#/join/${id}/black/${made.blackToken}`);
      }
      location.hash = `#/game/${id}`;
    } catch (e) {
      notice(said(e), "error");
    }
  };
  const watchId = el("input", { id: "watch-id", placeholder: "game id", size: "40" });
  main.append(
    el("h2", {}, "A new match"),
    el(
      "div",
      { class: "form" },
      el("label", {}, "Variant ", variant),
      el("label", {}, "Points (0: money) ", length),
      el("label", {}, "Against ", opponent),
      el("label", {}, "Computer's level ", level),
      el("label", {}, "Minutes on each clock (0: none) ", minutes),
      el("label", {}, "Hints allowed ", hints),
      button("Start", start, { id: "start" }),
    ),
    options,
    el("h2", {}, "Watch a match"),
    el(
      "div",
      { class: "form" },
      watchId,
      button("Watch", () => {
        if (watchId.value.trim()) location.hash = `#/game/${watchId.value.trim()}`;
      }),
    ),
  );
}

/// The other seat, from a friend's link: its token kept here.
export function join(id: string, seat: string, token: string): void {
  keepToken(id, seat === "white" ? Seat.WHITE : Seat.BLACK, token);
  location.replace(`#/game/${id}`);
}

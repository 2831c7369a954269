// Small helpers to build the page's elements.
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

export function button(label: string, onClick: () => void, attrs: Record<string, string> = {}) {
  const b = el("button", attrs, label);
  b.addEventListener("click", onClick);
  return b;
}

/// The page's main area, emptied.
export function page(): HTMLElement {
  const main = document.getElementById("main")!;
  main.replaceChildren();
  return main;
}

/// Says something plainly at the top of the page (errors, notices).
export function notice(text: string, kind: "error" | "info" = "info"): void {
  const n = document.getElementById("notice")!;
  n.textContent = text;
  n.className = kind;
}

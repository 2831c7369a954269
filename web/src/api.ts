// The API over gRPC-Web (the same origin that served the page), and the
// seat tokens this browser holds, kept in localStorage as bgctl keeps
// them in its file: by game id, per seat.
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { GameService, Seat } from "./gen/backgammon/v1/backgammon_pb";

export const api: Client<typeof GameService> = createClient(
  GameService,
  createGrpcWebTransport({ baseUrl: location.origin }),
);

export type Tokens = { white?: string; black?: string };

const KEY = "backgammon.tokens";

function all(): Record<string, Tokens> {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? "{}");
  } catch {
    return {};
  }
}

export function tokensOf(gameId: string): Tokens {
  return all()[gameId] ?? {};
}

export function keepToken(gameId: string, seat: Seat, token: string): void {
  const every = all();
  const mine = every[gameId] ?? {};
  if (seat === Seat.WHITE) mine.white = token;
  else mine.black = token;
  every[gameId] = mine;
  localStorage.setItem(KEY, JSON.stringify(every));
}

/// The token of `seat` here, if this browser holds it.
export function tokenFor(gameId: string, seat: Seat): string | undefined {
  const t = tokensOf(gameId);
  return seat === Seat.WHITE ? t.white : seat === Seat.BLACK ? t.black : undefined;
}

/// Call options carrying a seat's token.
export function as(token: string) {
  return { headers: { authorization: `Bearer ${token}` } };
}

/// An error as the page shows it: the server's message, plainly.
export function said(e: unknown): string {
  if (e && typeof e === "object" && "rawMessage" in e) {
    return String((e as { rawMessage: string }).rawMessage);
  }
  return String(e);
}

/*
 * Standard backgammon as a variant plugin written in C, against the C ABI
 * only: it includes the header generated from the Rust definitions
 * (crates/variant-api/include/bg_variant.h) and nothing of the project's
 * Rust code. It proves the ABI is language-neutral; `bgctl plugin check`
 * checks it, and its legal plays are checked against GNU Backgammon's on
 * the standard corpus (crates/cli/tests/c_plugin.rs).
 *
 * Build:
 *   cc -std=c11 -O2 -Wall -Wextra -shared -fPIC \
 *      -I crates/variant-api/include -o libbg_c_backgammon.so \
 *      examples/c-plugin/backgammon.c
 *
 * The rules are those of docs/rules.md, part 1: a checker moves by one
 * die to a point not held by two or more of the other side's checkers,
 * hitting a single one; checkers on the bar enter first; a side bears off
 * once all its checkers are home, a higher die bearing off from the
 * highest point; as many dice must be played as can be, and the higher
 * die when only one can. The answers are protobuf messages of
 * proto/variant/v1/variant.proto, written by hand below.
 */

#include <stdlib.h>
#include <string.h>

#include "bg_variant.h"

#define NAME "c_backgammon"
#define VERSION "0.1.0"
/* The state: a version byte, then both sides' 26 slots. */
#define STATE_VERSION 'C'
#define STATE_LEN 53

/* ---- answers: a growing byte buffer, and protobuf fields ---- */

typedef struct {
    uint8_t *bytes;
    size_t len, cap;
    int failed; /* an allocation failed */
} Out;

static void put(Out *out, const void *bytes, size_t len) {
    if (out->failed) return;
    if (out->len + len > out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 64;
        while (cap < out->len + len) cap *= 2;
        uint8_t *grown = realloc(out->bytes, cap);
        if (!grown) {
            out->failed = 1;
            return;
        }
        out->bytes = grown;
        out->cap = cap;
    }
    memcpy(out->bytes + out->len, bytes, len);
    out->len += len;
}

static void put_varint(Out *out, uint64_t v) {
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) b[n] |= 0x80;
        n++;
    } while (v);
    put(out, b, n);
}

/* A varint field, written even when 0 (for `optional` fields). */
static void field_uint(Out *out, uint32_t field, uint64_t v) {
    put_varint(out, (uint64_t)field << 3 | 0);
    put_varint(out, v);
}

static void field_bytes(Out *out, uint32_t field, const void *bytes, size_t len) {
    put_varint(out, (uint64_t)field << 3 | 2);
    put_varint(out, len);
    put(out, bytes, len);
}

static void field_string(Out *out, uint32_t field, const char *s) {
    field_bytes(out, field, s, strlen(s));
}

/* Hands `out` over to the host as the call's buffer (or fails). */
static Status give(Out *out, Buffer *buffer, Status status) {
    if (out->failed) {
        free(out->bytes);
        return STATUS_PANIC;
    }
    buffer->ptr = out->bytes;
    buffer->len = out->len;
    buffer->cap = out->cap;
    return status;
}

/* An error: its message in the buffer. */
static Status fail(Buffer *buffer, Status status, const char *message) {
    Out out = {0};
    put(&out, message, strlen(message));
    return give(&out, buffer, status);
}

/* ---- the board ---- */

static int sum(const uint8_t *slots, int from, int to) {
    int n = 0;
    for (int p = from; p <= to; p++) n += slots[p];
    return n;
}

/* NULL if `board` is a position of this variant, else why not. */
static const char *check_board(const Board *board) {
    for (int s = 0; s < 2; s++)
        if (sum(board->checkers[s], OFF, BAR) != CHECKERS) return "a side has not 15 checkers";
    for (int p = 1; p <= POINTS; p++)
        if (board->checkers[0][p] && board->checkers[1][25 - p]) return "a point held by both sides";
    if (board->pinned[0] || board->pinned[1]) return "standard backgammon has no pinned checkers";
    return NULL;
}

static const char *decode_state(const uint8_t *state, size_t len, Board *board) {
    if (len != STATE_LEN || state[0] != STATE_VERSION) return "not a c_backgammon state";
    memset(board, 0, sizeof *board);
    memcpy(board->checkers[0], state + 1, 26);
    memcpy(board->checkers[1], state + 27, 26);
    return check_board(board);
}

static void encode_state(const Board *board, uint8_t state[STATE_LEN]) {
    state[0] = STATE_VERSION;
    memcpy(state + 1, board->checkers[0], 26);
    memcpy(state + 27, board->checkers[1], 26);
}

/* Whether checker of `seat` on `from` may move by `die`; where to. */
static int can_move(const Board *b, int seat, int from, int die, int *to) {
    const uint8_t *me = b->checkers[seat], *opp = b->checkers[1 - seat];
    if (me[from] == 0) return 0;
    if (me[BAR] > 0 && from != BAR) return 0;
    int target = from - die;
    if (target >= 1) {
        if (opp[25 - target] >= 2) return 0;
        *to = target;
        return 1;
    }
    if (sum(me, 7, BAR) > 0) return 0; /* not all home */
    if (target < 0 && sum(me, from + 1, 6) > 0) return 0; /* a higher checker must move */
    *to = OFF;
    return 1;
}

static void move_checker(Board *b, int seat, int from, int to) {
    uint8_t *me = b->checkers[seat], *opp = b->checkers[1 - seat];
    me[from]--;
    me[to]++;
    if (to != OFF && opp[25 - to] == 1) {
        opp[25 - to] = 0;
        opp[BAR]++;
    }
}

/* ---- legal plays: every order of the dice, the longest plays ---- */

typedef struct {
    LegalPlay *plays;
    int *first_die; /* the die of a one-move play */
    uint64_t *keys; /* a hash of each play's result, compared first */
    size_t count, cap;
    int longest;
    int failed;
} Found;

/* FNV-1a over the board's bytes: doubles reach the same result by many
 * orders, and comparing hashes first keeps the duplicate check cheap. */
static uint64_t board_key(const Board *b) {
    const uint8_t *bytes = (const uint8_t *)b;
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < sizeof *b; i++) h = (h ^ bytes[i]) * 0x100000001b3u;
    return h;
}

static void record(Found *f, const Board *result, const Move *moves, int n, int first_die) {
    if (f->failed || n < f->longest) return;
    if (n > f->longest) {
        f->longest = n;
        f->count = 0;
    }
    uint64_t key = board_key(result);
    for (size_t i = 0; i < f->count; i++)
        if (f->keys[i] == key && memcmp(&f->plays[i].result, result, sizeof *result) == 0) return;
    if (f->count == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        LegalPlay *plays = realloc(f->plays, cap * sizeof *plays);
        if (plays) f->plays = plays;
        int *dice = realloc(f->first_die, cap * sizeof *dice);
        if (dice) f->first_die = dice;
        uint64_t *keys = realloc(f->keys, cap * sizeof *keys);
        if (keys) f->keys = keys;
        if (!plays || !dice || !keys) {
            f->failed = 1;
            return;
        }
        f->cap = cap;
    }
    LegalPlay *lp = &f->plays[f->count];
    memset(lp, 0, sizeof *lp);
    memcpy(lp->play.moves, moves, (size_t)n * sizeof *moves);
    lp->play.len = (uint8_t)n;
    lp->result = *result;
    f->first_die[f->count] = first_die;
    f->keys[f->count] = key;
    f->count++;
}

static void explore(Found *f, const Board *b, int seat, int *dice, int left, Move *moves,
                    int n, int first_die) {
    int moved = 0;
    for (int i = 0; i < left; i++) {
        int repeated = 0;
        for (int j = 0; j < i; j++) repeated |= dice[j] == dice[i];
        if (repeated) continue;
        for (int from = BAR; from >= 1; from--) {
            int to;
            if (!can_move(b, seat, from, dice[i], &to)) continue;
            moved = 1;
            Board next = *b;
            move_checker(&next, seat, from, to);
            moves[n].from = (uint8_t)from;
            moves[n].to = (uint8_t)to;
            int rest[4], r = 0;
            for (int k = 0; k < left; k++)
                if (k != i) rest[r++] = dice[k];
            explore(f, &next, seat, rest, r, moves, n + 1, n == 0 ? dice[i] : first_die);
        }
    }
    if (!moved) record(f, b, moves, n, first_die);
}

/* The legal plays of `seat` with `d1`, `d2` on `b` (the caller frees them). */
static void legal_plays(Found *f, const Board *b, int seat, int d1, int d2) {
    memset(f, 0, sizeof *f);
    int dice[4] = {d1, d2, d1, d2};
    Move moves[4];
    explore(f, b, seat, dice, d1 == d2 ? 4 : 2, moves, 0, 0);
    /* Only one die can be played: the higher, if it can. */
    int high = d1 > d2 ? d1 : d2;
    if (f->longest == 1 && d1 != d2) {
        int high_playable = 0;
        for (size_t i = 0; i < f->count; i++) high_playable |= f->first_die[i] == high;
        if (high_playable) {
            size_t kept = 0;
            for (size_t i = 0; i < f->count; i++)
                if (f->first_die[i] == high) {
                    f->plays[kept] = f->plays[i];
                    f->keys[kept++] = f->keys[i];
                }
            f->count = kept;
        }
    }
}

static void free_found(Found *f) {
    free(f->plays);
    free(f->first_die);
    free(f->keys);
}

/* ---- messages ---- */

/* The win of `winner` judged on the loser's position: 1 single, 2 gammon,
 * 3 backgammon (a checker still on the bar or in the winner's home). */
static int win_level(const Board *b, int loser) {
    const uint8_t *l = b->checkers[loser];
    if (l[OFF] > 0) return 1;
    return sum(l, 19, BAR) > 0 ? 3 : 2;
}

static void outcome(Out *out, int winner, int level, int by_bearing_off) {
    static const char *kinds[] = {"", "single", "gammon", "backgammon"};
    field_uint(out, 1, (uint64_t)winner);
    field_uint(out, 2, (uint64_t)level);
    field_string(out, 3, kinds[level]);
    if (by_bearing_off) field_uint(out, 4, 1);
}

static Status setup(const Board *board, Buffer *out) {
    uint8_t state[STATE_LEN];
    encode_state(board, state);
    Out msg = {0};
    field_bytes(&msg, 1, state, sizeof state);
    field_uint(&msg, 2, 1); /* OPENING_PLAY_OPENING_DICE */
    field_uint(&msg, 3, 1); /* the cube */
    return give(&msg, out, STATUS_OK);
}

static int valid_dice(Dice dice) {
    return dice.d1 >= 1 && dice.d1 <= 6 && dice.d2 >= 1 && dice.d2 <= 6;
}

/* ---- the ABI's functions ---- */

static Status info(Buffer *out) {
    Out msg = {0};
    field_string(&msg, 1, NAME);
    field_string(&msg, 2, VERSION);
    field_string(&msg, 3, "Standard backgammon, written in C against the C ABI.");
    field_uint(&msg, 5, 3);
    field_string(&msg, 6, "single");
    field_string(&msg, 6, "gammon");
    field_string(&msg, 6, "backgammon");
    return give(&msg, out, STATUS_OK);
}

static Status new_game(const uint8_t *options, uintptr_t len, Buffer *out) {
    (void)options;
    if (len > 0) return fail(out, STATUS_INVALID_OPTION, "c_backgammon takes no options");
    Board board = {0};
    static const int start[][2] = {{24, 2}, {13, 5}, {8, 3}, {6, 5}};
    for (int i = 0; i < 4; i++) {
        board.checkers[0][start[i][0]] = (uint8_t)start[i][1];
        board.checkers[1][start[i][0]] = (uint8_t)start[i][1];
    }
    return setup(&board, out);
}

static Status setup_position(const Board *board, const uint8_t *options, uintptr_t len,
                             Buffer *out) {
    (void)options;
    if (len > 0) return fail(out, STATUS_INVALID_OPTION, "c_backgammon takes no options");
    const char *why = check_board(board);
    if (why) return fail(out, STATUS_INVALID_INPUT, why);
    return setup(board, out);
}

static Status board(const uint8_t *state, uintptr_t len, Board *board, Buffer *error) {
    const char *why = decode_state(state, len, board);
    if (why) return fail(error, STATUS_INVALID_INPUT, why);
    return STATUS_OK;
}

static Status plays(const uint8_t *state, uintptr_t len, uint8_t seat, Dice dice,
                    LegalPlay *out, uintptr_t capacity, uintptr_t *count, Buffer *error) {
    Board b;
    const char *why = decode_state(state, len, &b);
    if (why) return fail(error, STATUS_INVALID_INPUT, why);
    if (seat > 1 || !valid_dice(dice)) return fail(error, STATUS_INVALID_INPUT, "no such seat or dice");
    Found f;
    legal_plays(&f, &b, seat, dice.d1, dice.d2);
    if (f.failed) {
        free_found(&f);
        return fail(error, STATUS_PANIC, "out of memory");
    }
    *count = f.count;
    Status status = STATUS_BUFFER_TOO_SMALL;
    if (f.count <= capacity) {
        memcpy(out, f.plays, f.count * sizeof *out);
        status = STATUS_OK;
    }
    free_found(&f);
    return status;
}

static Status apply_play(const uint8_t *state, uintptr_t len, uint8_t seat, Dice dice,
                         const Play *play, Buffer *out) {
    Board b;
    const char *why = decode_state(state, len, &b);
    if (why) return fail(out, STATUS_INVALID_INPUT, why);
    if (seat > 1 || !valid_dice(dice)) return fail(out, STATUS_INVALID_INPUT, "no such seat or dice");
    if (play->len > MAX_MOVES) return fail(out, STATUS_ILLEGAL_PLAY, "too many moves");
    /* The play's result, each move checked to go forward onto a point
     * not blocked; then it must be one of the legal plays' results. */
    Board result = b;
    for (int i = 0; i < play->len; i++) {
        Move m = play->moves[i];
        if (m.from > BAR || m.from <= m.to || m.to > POINTS ||
            result.checkers[seat][m.from] == 0 ||
            (m.to != OFF && result.checkers[1 - seat][25 - m.to] >= 2))
            return fail(out, STATUS_ILLEGAL_PLAY, "not a legal play");
        move_checker(&result, seat, m.from, m.to);
    }
    Found f;
    legal_plays(&f, &b, seat, dice.d1, dice.d2);
    int legal = 0;
    for (size_t i = 0; i < f.count; i++)
        legal |= memcmp(&f.plays[i].result, &result, sizeof result) == 0;
    int failed = f.failed;
    free_found(&f);
    if (failed) return fail(out, STATUS_PANIC, "out of memory");
    if (!legal) return fail(out, STATUS_ILLEGAL_PLAY, "not a legal play");

    uint8_t next[STATE_LEN];
    encode_state(&result, next);
    Out msg = {0};
    field_bytes(&msg, 1, next, sizeof next);
    if (result.checkers[seat][OFF] == CHECKERS) {
        Out won = {0};
        outcome(&won, seat, win_level(&result, 1 - seat), 1);
        if (won.failed) msg.failed = 1;
        field_bytes(&msg, 3, won.bytes, won.len);
        free(won.bytes);
    }
    return give(&msg, out, STATUS_OK);
}

static Status after_roll(const uint8_t *state, uintptr_t len, uint8_t seat, Dice dice, Buffer *out) {
    Board b;
    const char *why = decode_state(state, len, &b);
    if (why) return fail(out, STATUS_INVALID_INPUT, why);
    if (seat > 1 || !valid_dice(dice)) return fail(out, STATUS_INVALID_INPUT, "no such seat or dice");
    Out msg = {0};
    field_bytes(&msg, 1, state, len);
    return give(&msg, out, STATUS_OK);
}

static Status decide(const uint8_t *state, uintptr_t len, uint8_t seat, const uint8_t *choice,
                     uintptr_t choice_len, Buffer *out) {
    (void)state, (void)len, (void)seat, (void)choice, (void)choice_len;
    return fail(out, STATUS_ILLEGAL_DECISION, "c_backgammon asks no decisions");
}

static Status concede(const uint8_t *state, uintptr_t len, uint8_t loser, Buffer *out) {
    Board b;
    const char *why = decode_state(state, len, &b);
    if (why) return fail(out, STATUS_INVALID_INPUT, why);
    if (loser > 1) return fail(out, STATUS_INVALID_INPUT, "no such seat");
    Out msg = {0};
    outcome(&msg, 1 - loser, win_level(&b, loser), 0);
    return give(&msg, out, STATUS_OK);
}

static void free_buffer(Buffer buffer) {
    free(buffer.ptr);
}

static const VariantDescriptor DESCRIPTOR = {
    .abi_major = ABI_MAJOR,
    .abi_minor = ABI_MINOR,
    .struct_size = sizeof(VariantDescriptor),
    /* C code cannot panic; apply_play checks plays itself. */
    .flags = FLAG_PANIC_UNWIND | FLAG_CHECKS_PLAYS,
    .layout = LAYOUT_FINGERPRINT,
    .name = {(const uint8_t *)NAME, sizeof NAME - 1},
    .version = {(const uint8_t *)VERSION, sizeof VERSION - 1},
    .api_version = {(const uint8_t *)"c", 1},
    .capabilities = CAPABILITY_CUBE | CAPABILITY_STANDARD_BOARD | CAPABILITY_SETUP_POSITION,
    .info = info,
    .new_game = new_game,
    .setup_position = setup_position,
    .board = board,
    .legal_plays = plays,
    .apply_play = apply_play,
    .after_roll = after_roll,
    .decide = decide,
    .concede = concede,
    .free_buffer = free_buffer,
    .scoreboard = NULL, /* scores only at the end */
};

const VariantDescriptor *bg_variant_entry(void) {
    return &DESCRIPTOR;
}

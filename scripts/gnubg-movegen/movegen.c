/*
 * Times GNU Backgammon's own move generator, GenerateMoves, over the
 * legal-plays corpus, in-process: the reference `bgctl bench movegen` is
 * compared with. Built as a shared library and driven by time_gnubg.py,
 * which imports PyPI's gnubg module (the same build the corpus was made
 * with) and hands over the addresses of its two exported functions.
 *
 * The types are gnubg's, as its eval.h and positionid.h declare them
 * (gnubg 1.1.0a16): a board is `unsigned int[2][25]` (TanBoard), and a
 * move list begins with its count of moves (movelist.cMoves). Only that
 * count is read; the list itself is gnubg's own buffer.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned int Board[2][25];
typedef int (*GenerateMovesFn)(void *movelist, const Board board, int die1, int die2, int partial);
typedef int (*PositionFromIdFn)(Board board, const char *position_id);

/* gnubg's movelist is 32 bytes on x86-64; room to spare. */
struct movelist_space {
    unsigned int count;
    unsigned char rest[124];
};

struct position {
    Board board;
    int die1, die2;
    unsigned int plays;
};

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * Reads the corpus, checks that GenerateMoves finds each line's COUNT of
 * plays (an untimed warm-up pass), then times `repeat` passes. Writes the
 * median, fastest and slowest pass in ns a position; returns the number of
 * positions, or -1 with a message on stderr.
 */
long time_passes(const char *corpus, int repeat, void *generate_moves, void *position_from_id,
                 double *median_ns, double *fastest_ns, double *slowest_ns) {
    GenerateMovesFn generate = (GenerateMovesFn)generate_moves;
    PositionFromIdFn from_id = (PositionFromIdFn)position_from_id;
    FILE *file = fopen(corpus, "r");
    if (!file) {
        perror(corpus);
        return -1;
    }
    size_t capacity = 8192, n = 0;
    struct position *positions = malloc(capacity * sizeof *positions);
    char *line = NULL;
    size_t line_capacity = 0;
    while (positions && getline(&line, &line_capacity, file) > 0) {
        char id[32];
        struct position p;
        if (sscanf(line, "%31s %d %d %u", id, &p.die1, &p.die2, &p.plays) != 4)
            continue;
        memset(p.board, 0, sizeof p.board);
        if (from_id(p.board, id) == 0) {
            fprintf(stderr, "%s: gnubg does not read Position ID %s\n", corpus, id);
            free(positions);
            positions = NULL;
            break;
        }
        if (n == capacity) {
            struct position *grown = realloc(positions, 2 * capacity * sizeof *positions);
            if (!grown) {
                free(positions);
                positions = NULL;
                break;
            }
            positions = grown;
            capacity *= 2;
        }
        positions[n++] = p;
    }
    free(line);
    fclose(file);
    if (!positions || n == 0) {
        fprintf(stderr, "%s: no positions read\n", corpus);
        free(positions);
        return -1;
    }

    struct movelist_space list;
    for (size_t i = 0; i < n; i++) {
        memset(&list, 0, sizeof list);
        generate(&list, positions[i].board, positions[i].die1, positions[i].die2, 0);
        /* The empty play is listed as COUNT 1; gnubg lists no move. */
        unsigned int found = list.count == 0 ? 1 : list.count;
        if (found != positions[i].plays) {
            fprintf(stderr, "line %zu: GenerateMoves found %u plays, the corpus says %u\n",
                    i + 1, found, positions[i].plays);
            free(positions);
            return -1;
        }
    }

    if (repeat < 1)
        repeat = 1;
    double *times = malloc((size_t)repeat * sizeof *times);
    if (!times) {
        free(positions);
        return -1;
    }
    for (int r = 0; r < repeat; r++) {
        double start = now_ns();
        for (size_t i = 0; i < n; i++)
            generate(&list, positions[i].board, positions[i].die1, positions[i].die2, 0);
        times[r] = (now_ns() - start) / (double)n;
    }
    qsort(times, (size_t)repeat, sizeof *times, by_value);
    *median_ns = times[repeat / 2];
    *fastest_ns = times[0];
    *slowest_ns = times[repeat - 1];
    free(times);
    free(positions);
    return (long)n;
}

-- A game set up from a position: the board every game of its match starts
-- from (JSON), or NULL for the variant's own setup.
ALTER TABLE games ADD COLUMN start_board TEXT;

-- public_pairs: the pairs afrates publishes (visibility 'public'): what every rate, candle,
-- certificate, fixing, index and page is made for. Internal pairs (the USDT legs of synthetic
-- prices) are collected and aggregated but published by none of them. The one definition of
-- "published pair"; every query and function reads it from here.
DROP VIEW IF EXISTS public_pairs CASCADE;

CREATE VIEW public_pairs AS
SELECT pair, base, quote FROM pairs WHERE visibility = 'public';

-- Leases (docs/audit.md, "Usage limits"): a replica takes a few units of a bucket at once and charges them locally,
-- so most charges touch no database. A lease's units are out of the bucket until its holder reports what it spent
-- and gives the rest back; the bucket refills only up to the capacity less what is out, so the bucket and every
-- lease together never hold more than the limit. A lease past `expires_at` is spent: its holder stopped charging
-- from it before then (it lapses earlier on the holder's side), and a holder that died loses it.
CREATE TABLE limit_leases (
  user_id     text NOT NULL,
  service     text NOT NULL,
  action      text NOT NULL,
  holder      text NOT NULL,
  units       double precision NOT NULL,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (user_id, service, action, holder)
);

-- One call per trip to the database, under the bucket row's lock, so replicas charging one bucket queue on it and
-- each sees the leases the others hold. In order: the holder's spends since its last call, each at the time it was
-- made (the bucket refills up to it with the lease as it stood then, so the balance is what one bucket charged at
-- those times would hold), then the units the holder gives back (p_release), then the charge: allowed when the
-- bucket holds p_need (the cost less the holder's own units), taking up to p_want for the lease. A refusal with
-- nothing to report writes nothing, as a refused charge always did.
CREATE FUNCTION limit_charge(
  p_user text, p_service text, p_action text, p_capacity float8, p_rate float8, p_holder text,
  p_spent float8[], p_spent_ago float8[], p_held float8, p_release float8, p_cost float8, p_need float8, p_want float8, p_hold float8
) RETURNS TABLE (allowed boolean, available float8, taken float8)
LANGUAGE plpgsql AS $$
DECLARE
  tokens_now float8;
  refilled_at timestamptz;
  spent_at timestamptz;
  others float8;
  mine float8;
  wrote boolean := false;
  i int;
BEGIN
  SELECT b.tokens, b.updated_at INTO tokens_now, refilled_at FROM limit_buckets b
    WHERE b.user_id = p_user AND b.service = p_service AND b.action = p_action FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO limit_buckets (user_id, service, action, tokens, updated_at)
      VALUES (p_user, p_service, p_action, p_capacity, now()) ON CONFLICT DO NOTHING;
    SELECT b.tokens, b.updated_at INTO tokens_now, refilled_at FROM limit_buckets b
      WHERE b.user_id = p_user AND b.service = p_service AND b.action = p_action FOR UPDATE;
  END IF;
  DELETE FROM limit_leases l
    WHERE l.user_id = p_user AND l.service = p_service AND l.action = p_action AND l.expires_at <= now();
  SELECT coalesce(sum(l.units) FILTER (WHERE l.holder <> p_holder), 0), coalesce(sum(l.units) FILTER (WHERE l.holder = p_holder), 0)
    INTO others, mine FROM limit_leases l WHERE l.user_id = p_user AND l.service = p_service AND l.action = p_action;
  FOR i IN 1 .. coalesce(array_length(p_spent, 1), 0) LOOP
    spent_at := GREATEST(refilled_at, now() - make_interval(secs => p_spent_ago[i]));
    tokens_now := LEAST(p_capacity - others - mine, tokens_now + extract(epoch FROM spent_at - refilled_at)::float8 * p_rate);
    refilled_at := spent_at;
    mine := GREATEST(0, mine - p_spent[i]);
    wrote := true;
  END LOOP;
  tokens_now := LEAST(p_capacity - others - mine, tokens_now + GREATEST(0, extract(epoch FROM now() - refilled_at)::float8) * p_rate);
  -- what the holder says it holds: more here means spends it reported in a trip that failed, spent as of now (the
  -- margin is for the two sides' rounding)
  IF mine > p_held * (1 + 1e-9) + 1e-9 THEN
    mine := p_held;
    wrote := true;
  END IF;
  IF p_release > 0 AND mine > 0 THEN
    tokens_now := tokens_now + LEAST(p_release, mine);
    mine := mine - LEAST(p_release, mine);
    wrote := true;
  END IF;
  available := tokens_now;
  allowed := tokens_now >= p_need;
  taken := 0;
  IF p_cost > 0 AND allowed THEN
    taken := LEAST(tokens_now, GREATEST(p_need, p_want));
    tokens_now := tokens_now - taken;
    mine := GREATEST(0, mine + taken - p_cost);
    wrote := true;
  END IF;
  IF wrote THEN
    UPDATE limit_buckets b SET tokens = tokens_now, updated_at = now()
      WHERE b.user_id = p_user AND b.service = p_service AND b.action = p_action;
    IF mine > 0 THEN
      INSERT INTO limit_leases AS l (user_id, service, action, holder, units, expires_at)
        VALUES (p_user, p_service, p_action, p_holder, mine, now() + make_interval(secs => p_hold))
        ON CONFLICT (user_id, service, action, holder) DO UPDATE
        SET units = EXCLUDED.units, expires_at = CASE WHEN taken > 0 THEN EXCLUDED.expires_at ELSE l.expires_at END;
    ELSE
      DELETE FROM limit_leases l
        WHERE l.user_id = p_user AND l.service = p_service AND l.action = p_action AND l.holder = p_holder;
    END IF;
  END IF;
  RETURN NEXT;
END
$$;

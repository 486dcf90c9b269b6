-- Up Migration
-- Every Ed25519 public key that has signed: a certificate names its key (audit.ed25519_key_id), is
-- valid forever (validity.not_after is null) and must stay verifiable after the signing key is
-- rotated, so GET /v1/certificates/keys lists them all, not just the key in use. A key is recorded
-- before it signs anything (api/queries/certificates.ts: registerSigningKey); rows are never changed.
CREATE TABLE certificate_keys (
  key_id          text        PRIMARY KEY,
  algorithm       text        NOT NULL DEFAULT 'Ed25519' CHECK (algorithm = 'Ed25519'),
  public_key_pem  text        NOT NULL,
  first_used_at   timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE certificate_keys;

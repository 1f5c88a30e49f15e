-- Settings of the instance that commands other than serve need, recorded by serve (e.g. the tokens'
-- issuer, so `hubd token` mints tokens the server accepts without repeating --base-url).
CREATE TABLE instance_setting (
    name       text PRIMARY KEY,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

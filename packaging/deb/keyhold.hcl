# keyhold server configuration for the system service (keyhold.service).
# Vault's configuration format; every key: man keyhold-server, docs/server-config.md.
# This file is a conffile: upgrades keep your edits (dpkg asks when both sides changed).

# Records, encrypted by the barrier, in /var/lib/keyhold (the service's state folder).
storage "file" {
  path = "/var/lib/keyhold"
}

# The API on a Unix socket only: owned by the keyhold user and group, mode 0660, so members of
# the "keyhold" group may connect (sudo adduser YOU keyhold). No TCP listener.
listener "unix" {
  address     = "/run/keyhold/keyhold.sock"
  socket_mode = "660"
}

# A system service has no login keychain: the daemon starts sealed after each start and is
# unsealed with `keyhold operator unseal` (or configure an auto-unseal "seal" block).
keychain = "none"

log_level = "info"

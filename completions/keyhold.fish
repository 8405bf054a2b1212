# fish completion for keyhold. Generated from the command tree by `npm run docs`
# (src/docs/completion-fish.ts); do not edit.
# Install:  keyhold completion fish > ~/.config/fish/completions/keyhold.fish
# Key names, KV paths, mounts and destination names come from the daemon (`keyhold __complete`).

set -g __keyhold_paths 'server' 'status' 'login' 'operator' 'operator init' 'operator unseal' 'operator seal' 'read' 'write' 'list' 'delete' 'token' 'token create' 'token lookup' 'token revoke' 'policy' 'policy write' 'policy read' 'policy list' 'policy delete' 'secrets' 'secrets enable' 'secrets disable' 'secrets list' 'transit' 'transit keys' 'transit keys read' 'transit keys delete' 'transit keys export' 'transit keys backup' 'transit keys restore' 'transit keys wrapping-key' 'transit keys byok-export' 'transit keys list' 'transit keys create' 'transit keys config' 'transit keys rotate' 'transit keys trim' 'transit keys csr' 'transit keys set-certificate' 'transit config-keys' 'transit cache-config' 'transit import' 'transit import-version' 'transit encrypt' 'transit decrypt' 'transit rewrap' 'transit datakey' 'transit random' 'transit hash' 'transit hmac' 'transit sign' 'transit verify' 'kv' 'kv put' 'kv patch' 'kv get' 'kv list' 'kv delete' 'kv undelete' 'kv destroy' 'kv metadata' 'kv metadata get' 'kv metadata put' 'kv metadata patch' 'kv metadata delete' 'audit' 'audit enable' 'audit disable' 'audit list' 'completion' 'openapi' 'path-help' 'help'
set -g __keyhold_vopts 'server|--dev-root-token' 'server|--config' 'server|--socket' 'server|--listen' 'server|--tls-cert' 'server|--tls-key' 'server|--storage-path' 'server|--max-request-size' 'server|--log-level' 'server|--keychain' 'token create|--policy' 'token create|--policies' 'token create|--ttl' 'token create|--explicit-max-ttl' 'token create|--num-uses' 'token create|--display-name' 'token create|--renewable' 'token lookup|--accessor' 'token revoke|--accessor' 'secrets enable|--path' 'secrets enable|--description' 'secrets enable|--version' 'transit keys read|--mount' 'transit keys read|--context' 'transit keys delete|--mount' 'transit keys export|--mount' 'transit keys export|--output' 'transit keys backup|--mount' 'transit keys backup|--output' 'transit keys restore|--mount' 'transit keys restore|--backup' 'transit keys wrapping-key|--mount' 'transit keys byok-export|--mount' 'transit keys byok-export|--hash' 'transit keys byok-export|--output' 'transit keys list|--mount' 'transit keys create|--mount' 'transit keys create|--type' 'transit keys create|--derived' 'transit keys create|--convergent-encryption' 'transit keys create|--exportable' 'transit keys create|--allow-plaintext-backup' 'transit keys create|--key-size' 'transit keys create|--auto-rotate-period' 'transit keys create|--managed-key-name' 'transit keys create|--managed-key-id' 'transit keys create|--context' 'transit keys config|--mount' 'transit keys config|--min-decryption-version' 'transit keys config|--min-encryption-version' 'transit keys config|--deletion-allowed' 'transit keys config|--exportable' 'transit keys config|--allow-plaintext-backup' 'transit keys config|--auto-rotate-period' 'transit keys config|--disallow-sha1' 'transit keys rotate|--mount' 'transit keys rotate|--managed-key-name' 'transit keys rotate|--managed-key-id' 'transit keys trim|--mount' 'transit keys trim|--min-available-version' 'transit keys csr|--mount' 'transit keys csr|--version' 'transit keys csr|--csr' 'transit keys set-certificate|--mount' 'transit keys set-certificate|--version' 'transit keys set-certificate|--certificate-chain' 'transit config-keys|--mount' 'transit config-keys|--disable-upsert' 'transit cache-config|--mount' 'transit cache-config|--size' 'transit import|--file' 'transit import|--type' 'transit import|--hash-function' 'transit import|--mount' 'transit import|--auto-rotate-period' 'transit import-version|--file' 'transit import-version|--type' 'transit import-version|--hash-function' 'transit import-version|--mount' 'transit import-version|--version' 'transit encrypt|--mount' 'transit encrypt|--file' 'transit encrypt|--context' 'transit encrypt|--associated-data' 'transit encrypt|--key-version' 'transit encrypt|--nonce' 'transit encrypt|--padding-scheme' 'transit encrypt|--type' 'transit encrypt|--output' 'transit decrypt|--mount' 'transit decrypt|--context' 'transit decrypt|--associated-data' 'transit decrypt|--nonce' 'transit decrypt|--padding-scheme' 'transit decrypt|--file' 'transit decrypt|--output' 'transit rewrap|--mount' 'transit rewrap|--context' 'transit rewrap|--key-version' 'transit datakey|--mount' 'transit datakey|--bits' 'transit datakey|--context' 'transit datakey|--key-version' 'transit random|--mount' 'transit random|--encoding' 'transit random|--source' 'transit hash|--mount' 'transit hash|--file' 'transit hash|--encoding' 'transit hmac|--mount' 'transit hmac|--file' 'transit hmac|--algorithm' 'transit hmac|--key-version' 'transit sign|--mount' 'transit sign|--file' 'transit sign|--hash-algorithm' 'transit sign|--signature-algorithm' 'transit sign|--marshaling-algorithm' 'transit sign|--salt-length' 'transit sign|--context' 'transit sign|--key-version' 'transit verify|--mount' 'transit verify|--file' 'transit verify|--hash-algorithm' 'transit verify|--signature-algorithm' 'transit verify|--marshaling-algorithm' 'transit verify|--salt-length' 'transit verify|--context' 'transit verify|--signature' 'transit verify|--hmac' 'kv put|--cas' 'kv put|--mount' 'kv patch|--cas' 'kv patch|--remove' 'kv patch|--mount' 'kv get|--version' 'kv get|--mount' 'kv list|--mount' 'kv delete|--versions' 'kv delete|--mount' 'kv undelete|--versions' 'kv undelete|--mount' 'kv destroy|--versions' 'kv destroy|--mount' 'kv metadata get|--mount' 'kv metadata put|--max-versions' 'kv metadata put|--cas-required' 'kv metadata put|--delete-version-after' 'kv metadata put|--custom-metadata' 'kv metadata put|--mount' 'kv metadata patch|--max-versions' 'kv metadata patch|--cas-required' 'kv metadata patch|--delete-version-after' 'kv metadata patch|--custom-metadata' 'kv metadata patch|--mount' 'kv metadata patch|--remove-custom-metadata' 'kv metadata delete|--mount' 'audit enable|--path' 'audit enable|--description' '*|--address' '*|--token' '*|--format' '*|--field'

# Prints "p:PATH" (command words) and the number of positional arguments typed so far.
function __keyhold_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l path ''
    set -l npos 0
    set -l expect 0
    for t in $tokens
        if test $expect -eq 1
            set expect 0
            continue
        end
        switch $t
            case '--*=*'
            case '-*'
                if contains -- "$path|$t" $__keyhold_vopts; or contains -- "*|$t" $__keyhold_vopts
                    set expect 1
                end
            case '*'
                set -l next (string trim -- "$path $t")
                if test $npos -eq 0; and contains -- $next $__keyhold_paths
                    set path $next
                else
                    set npos (math $npos + 1)
                end
        end
    end
    echo "p:$path"
    echo $npos
end

# True when the command path is $argv[1].
function __keyhold_at
    set -l s (__keyhold_state)
    test "$s[1]" = "p:$argv[1]"
end

# True when completing positional argument $argv[2] ("N+" for N or later) of command path $argv[1].
function __keyhold_arg
    set -l s (__keyhold_state)
    test "$s[1]" = "p:$argv[1]"; or return 1
    set -l n (string replace '+' '' -- $argv[2])
    if string match -q '*+' -- $argv[2]
        test (math $s[2] + 1) -ge $n
    else
        test (math $s[2] + 1) -eq $n
    end
end

# Candidates from the daemon; quiet and quick when none answers.
function __keyhold_dyn
    set -l words (commandline -opc)
    set -l prog $words[1]
    set -e words[1]
    command $prog __complete $argv[1] -- $words (commandline -ct) 2>/dev/null
end

complete -c keyhold -f
complete -c keyhold -s v -l version -d 'output the version number'
complete -c keyhold -l address -x -d 'daemon address: unix:///path or http(s)://host:port (env KEYHOLD_ADDR, VAULT_...'
complete -c keyhold -l token -x -d 'token (env KEYHOLD_TOKEN, VAULT_TOKEN, or saved by `keyhold login`)'
complete -c keyhold -l format -x -a 'table json yaml raw' -d 'output format'
complete -c keyhold -l field -x -d 'print only this field of the response, raw, without newline'
complete -c keyhold -s h -l help -d 'Show help for the command'

# keyhold
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'server' -d 'Run the keyhold daemon'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'status' -d 'Seal status, version and storage of the daemon'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'login' -d 'Save a token for later commands (read from stdin, or the argument)'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'operator' -d 'Initialise, unseal and seal the daemon'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'read' -d 'Read any path (GET)'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'write' -d 'Write to any path (POST); values as k=v, k=@file, k=- (stdin)'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'list' -d 'List keys at any path (LIST)'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'delete' -d 'Delete any path (DELETE)'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'token' -d 'Create, look up and revoke tokens'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'policy' -d 'Manage ACL policies (HCL or JSON)'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'secrets' -d 'Mount, list and unmount secrets engines'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'transit' -d 'Transit engine: keys and cryptographic operations'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'kv' -d 'Versioned key/value secrets (KV version 2), like `vault kv`'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'audit' -d 'Audit devices: a JSON-lines log of every request, with sensitive values hashed'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'completion' -d 'Print the shell completion script (bash, zsh or fish)'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'openapi' -d 'Print the OpenAPI 3 document of the mounted routes (sys/internal/specs/openapi)'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'path-help' -d 'Describe the HTTP route serving a path: summary, operations and fields (like ...'
complete -c keyhold -n '__keyhold_arg \'\' 1' -a 'help' -d 'Help on a command, or on a topic: exit-codes, environment, formats'
complete -c keyhold -n '__keyhold_at \'server\'' -l dev -d 'dev mode: in-memory storage, unsealed, root token printed, transit/ and secre...'
complete -c keyhold -n '__keyhold_at \'server\'' -l dev-root-token -x -d 'root token id to use in dev mode'
complete -c keyhold -n '__keyhold_at \'server\'' -l config -r -F -d 'JSON config file (storage, listeners, max_request_size, log_level)'
complete -c keyhold -n '__keyhold_at \'server\'' -l socket -r -F -d 'Unix socket path (default: per-user runtime dir)'
complete -c keyhold -n '__keyhold_at \'server\'' -l no-socket -d 'do not listen on a Unix socket'
complete -c keyhold -n '__keyhold_at \'server\'' -l listen -x -d 'also listen on TCP (repeatable)'
complete -c keyhold -n '__keyhold_at \'server\'' -l tls-cert -r -F -d 'TLS certificate (PEM) for TCP listeners'
complete -c keyhold -n '__keyhold_at \'server\'' -l tls-key -r -F -d 'TLS private key (PEM) for TCP listeners'
complete -c keyhold -n '__keyhold_at \'server\'' -l storage-path -r -F -d 'file storage directory'
complete -c keyhold -n '__keyhold_at \'server\'' -l max-request-size -x -d 'request size limit (default 33554432)'
complete -c keyhold -n '__keyhold_at \'server\'' -l log-level -x -a 'debug info warn error off' -d 'log level'
complete -c keyhold -n '__keyhold_at \'server\'' -l keychain -x -a 'os none' -d 'where the master key is kept'

# keyhold operator
complete -c keyhold -n '__keyhold_arg \'operator\' 1' -a 'init' -d 'Initialise storage; the master key goes to the OS keychain, the recovery key ...'
complete -c keyhold -n '__keyhold_arg \'operator\' 1' -a 'unseal' -d 'Unseal with the recovery key read from stdin'
complete -c keyhold -n '__keyhold_arg \'operator\' 1' -a 'seal' -d 'Seal the daemon (forget keys until unsealed)'
complete -c keyhold -n '__keyhold_at \'operator init\'' -l no-keychain -d 'do not store the master key in the OS keychain'
complete -c keyhold -n '__keyhold_at \'operator seal\'' -s y -l yes -d 'do not ask for confirmation'
complete -c keyhold -n '__keyhold_arg \'read\' 1' -a '(__keyhold_dyn mounts)'
complete -c keyhold -n '__keyhold_at \'write\'' -s f -l force -d 'write with no data'
complete -c keyhold -n '__keyhold_arg \'write\' 1' -a '(__keyhold_dyn mounts)'
complete -c keyhold -n '__keyhold_arg \'list\' 1' -a '(__keyhold_dyn mounts)'
complete -c keyhold -n '__keyhold_arg \'delete\' 1' -a '(__keyhold_dyn mounts)'

# keyhold token
complete -c keyhold -n '__keyhold_arg \'token\' 1' -a 'create' -d 'Create a token'
complete -c keyhold -n '__keyhold_arg \'token\' 1' -a 'lookup' -d 'Look up the current token, or one given with --accessor or on stdin (-)'
complete -c keyhold -n '__keyhold_arg \'token\' 1' -a 'revoke' -d 'Revoke a token (stdin with "-"), by --accessor, or the current one with --self'
complete -c keyhold -n '__keyhold_at \'token create\'' -l policy -x -a '(__keyhold_dyn policies)' -d 'policy (repeatable)'
complete -c keyhold -n '__keyhold_at \'token create\'' -l policies -x -d 'comma-separated policies'
complete -c keyhold -n '__keyhold_at \'token create\'' -l ttl -x -d 'time to live, e.g.'
complete -c keyhold -n '__keyhold_at \'token create\'' -l explicit-max-ttl -x -d 'hard lifetime limit'
complete -c keyhold -n '__keyhold_at \'token create\'' -l num-uses -x -d 'number of uses (0 = unlimited)'
complete -c keyhold -n '__keyhold_at \'token create\'' -l display-name -x -d 'display name'
complete -c keyhold -n '__keyhold_at \'token create\'' -l orphan -d 'create an orphan token'
complete -c keyhold -n '__keyhold_at \'token create\'' -l no-default-policy -d 'do not attach the default policy'
complete -c keyhold -n '__keyhold_at \'token create\'' -l renewable -x -d 'whether it can be renewed'
complete -c keyhold -n '__keyhold_at \'token lookup\'' -l accessor -x -d 'look up by accessor'
complete -c keyhold -n '__keyhold_at \'token revoke\'' -l accessor -x -d 'revoke by accessor'
complete -c keyhold -n '__keyhold_at \'token revoke\'' -l self -d 'revoke the calling token'

# keyhold policy
complete -c keyhold -n '__keyhold_arg \'policy\' 1' -a 'write' -d 'Create or replace a policy from a file or stdin (-)'
complete -c keyhold -n '__keyhold_arg \'policy\' 1' -a 'read' -d 'Print a policy'
complete -c keyhold -n '__keyhold_arg \'policy\' 1' -a 'list' -d 'List policies'
complete -c keyhold -n '__keyhold_arg \'policy\' 1' -a 'delete' -d 'Delete a policy'
complete -c keyhold -n '__keyhold_arg \'policy write\' 1' -a '(__keyhold_dyn policies)'
complete -c keyhold -n '__keyhold_arg \'policy write\' 2' -F
complete -c keyhold -n '__keyhold_arg \'policy read\' 1' -a '(__keyhold_dyn policies)'
complete -c keyhold -n '__keyhold_arg \'policy delete\' 1' -a '(__keyhold_dyn policies)'

# keyhold secrets
complete -c keyhold -n '__keyhold_arg \'secrets\' 1' -a 'enable' -d 'Mount an engine: transit, kv-v2 (or kv with --version 2)'
complete -c keyhold -n '__keyhold_arg \'secrets\' 1' -a 'disable' -d 'Unmount an engine and delete its data'
complete -c keyhold -n '__keyhold_arg \'secrets\' 1' -a 'list' -d 'List mounted engines'
complete -c keyhold -n '__keyhold_at \'secrets enable\'' -l path -x -d 'mount path (default: the type)'
complete -c keyhold -n '__keyhold_at \'secrets enable\'' -l description -x -d 'description'
complete -c keyhold -n '__keyhold_at \'secrets enable\'' -l version -x -d 'kv version (only 2)'
complete -c keyhold -n '__keyhold_at \'secrets disable\'' -s y -l yes -d 'do not ask for confirmation'
complete -c keyhold -n '__keyhold_arg \'secrets disable\' 1' -a '(__keyhold_dyn mounts)'

# keyhold transit
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'keys' -d 'Transit keys: create, read, rotate, configure, export, back up, import'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'config-keys' -d 'Mount-wide key settings: disable_upsert stops encrypt from creating keys'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'cache-config' -d 'Size of the cache of loaded keys (0 = unbounded, else >= 10, LRU); applied on...'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'import' -d 'Import a key you hold (BYOK): fetches the wrapping key and wraps the key locally'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'import-version' -d 'Import new material into an imported key (new version, or complete a public-o...'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'encrypt' -d 'Encrypt stdin (or --file) with a named key; prints the ciphertext (--field ci...'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'decrypt' -d 'Decrypt a ciphertext (argument or stdin) and write the raw plaintext bytes to...'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'rewrap' -d 'Re-encrypt a ciphertext (argument or stdin) with the latest key version; neve...'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'datakey' -d 'Generate a data key: "wrapped" (ciphertext only) or "plaintext" (ciphertext a...'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'random' -d 'Random bytes from the daemon (base64 text by default)'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'hash' -d 'Hash stdin (or --file); prints the digest (hex by default)'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'hmac' -d 'HMAC of stdin (or --file) with a key (--field hmac for only the value)'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'sign' -d 'Sign stdin (or --file) with an asymmetric key (--field signature for only the...'
complete -c keyhold -n '__keyhold_arg \'transit\' 1' -a 'verify' -d 'Verify a signature or HMAC of stdin (or --file); exit 0 when valid, 1 when not'

# keyhold transit keys
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'read' -d 'Show a key: type, versions (public keys for asymmetric types), settings'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'delete' -d 'Delete a key and all its versions (needs deletion_allowed; data encrypted wit...'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'export' -d 'Export key material (exportable keys) or public keys / certificate chains'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'backup' -d 'Print a Vault-format plaintext backup of a key (needs exportable and allow_pl...'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'restore' -d 'Restore a key from a backup read from stdin (or --backup @file)'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'wrapping-key' -d 'Print the mount\'s RSA-4096 wrapping public key (PEM) used to build import cip...'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'byok-export' -d 'Export a key wrapped for another RSA key (for example another service\'s wrapp...'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'list' -d 'List key names'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'create' -d 'Create a key (an existing key is left unchanged), read it, or delete it'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'config' -d 'Tune a key: minimum versions, deletion, export and backup flags, auto-rotatio...'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'rotate' -d 'Add a new latest version of the key'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'trim' -d 'Permanently delete versions below min_available_version'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'csr' -d 'A PKCS#10 certificate request signed by the key (optional PEM template)'
complete -c keyhold -n '__keyhold_arg \'transit keys\' 1' -a 'set-certificate' -d 'Attach a certificate chain (leaf first; the leaf must carry this key version)'
complete -c keyhold -n '__keyhold_at \'transit keys read\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit keys read\'' -l context -x -d 'context to show derived Ed25519 public keys'
complete -c keyhold -n '__keyhold_arg \'transit keys read\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys delete\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_arg \'transit keys delete\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys export\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit keys export\'' -l output -r -F -d 'write the JSON export to this file (mode 0600) instead of stdout'
complete -c keyhold -n '__keyhold_arg \'transit keys export\' 2' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys backup\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit keys backup\'' -l output -r -F -d 'write the backup to this file (mode 0600) instead of stdout'
complete -c keyhold -n '__keyhold_arg \'transit keys backup\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys restore\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit keys restore\'' -l backup -x -d 'where to read the backup: @file or - (stdin, the default)'
complete -c keyhold -n '__keyhold_at \'transit keys restore\'' -l force -d 'overwrite an existing key of that name'
complete -c keyhold -n '__keyhold_arg \'transit keys restore\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys wrapping-key\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit keys byok-export\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit keys byok-export\'' -l hash -x -d 'OAEP hash: SHA1, SHA224, SHA256, SHA384, SHA512'
complete -c keyhold -n '__keyhold_at \'transit keys byok-export\'' -l output -r -F -d 'write the JSON result to this file (mode 0600) instead of stdout'
complete -c keyhold -n '__keyhold_at \'transit keys list\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the engine'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the engine'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l type -x -d 'Key type: aes256-gcm96 (default), aes128-gcm96, chacha20-poly1305, xchacha20-...'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l derived -x -d 'Derive a key per request from a context'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l convergent-encryption -x -d 'Same plaintext and context give the same ciphertext (needs derived)'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l exportable -x -d 'Allow exporting the key material (cannot be undone)'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l allow-plaintext-backup -x -d 'Allow plaintext backups (cannot be undone)'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l key-size -x -d 'Key size in bytes, hmac keys only (32-512, default 32)'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l auto-rotate-period -x -d 'Rotate automatically after this period (0 = never, else at least 1h)'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l managed-key-name -x -d 'Managed key name (type managed_key)'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l managed-key-id -x -d 'Managed key id (type managed_key)'
complete -c keyhold -n '__keyhold_at \'transit keys create\'' -l context -x -d 'Read only: base64 context to show derived Ed25519 public keys'
complete -c keyhold -n '__keyhold_arg \'transit keys create\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys config\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the engine'
complete -c keyhold -n '__keyhold_at \'transit keys config\'' -l min-decryption-version -x -d 'Oldest version that may decrypt/verify'
complete -c keyhold -n '__keyhold_at \'transit keys config\'' -l min-encryption-version -x -d 'Oldest version that may encrypt/sign (0 = latest)'
complete -c keyhold -n '__keyhold_at \'transit keys config\'' -l deletion-allowed -x -d 'Allow deleting the key'
complete -c keyhold -n '__keyhold_at \'transit keys config\'' -l exportable -x -d 'Allow export (one-way)'
complete -c keyhold -n '__keyhold_at \'transit keys config\'' -l allow-plaintext-backup -x -d 'Allow plaintext backup (one-way)'
complete -c keyhold -n '__keyhold_at \'transit keys config\'' -l auto-rotate-period -x -d 'Auto-rotation period (0 = off, else at least 1h); omitted = unchanged'
complete -c keyhold -n '__keyhold_at \'transit keys config\'' -l disallow-sha1 -x -d 'Refuse sha1 for sign and verify with this key (keyhold extension)'
complete -c keyhold -n '__keyhold_arg \'transit keys config\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys rotate\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the engine'
complete -c keyhold -n '__keyhold_at \'transit keys rotate\'' -l managed-key-name -x -d 'Managed key name (type managed_key)'
complete -c keyhold -n '__keyhold_at \'transit keys rotate\'' -l managed-key-id -x -d 'Managed key id (type managed_key)'
complete -c keyhold -n '__keyhold_arg \'transit keys rotate\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys trim\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the engine'
complete -c keyhold -n '__keyhold_at \'transit keys trim\'' -l min-available-version -x -d 'Versions below this are deleted for good'
complete -c keyhold -n '__keyhold_arg \'transit keys trim\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys csr\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the engine'
complete -c keyhold -n '__keyhold_at \'transit keys csr\'' -l version -x -d 'Key version: a number or "latest" (default)'
complete -c keyhold -n '__keyhold_at \'transit keys csr\'' -l csr -x -d 'PEM CSR template whose subject and extensions are kept'
complete -c keyhold -n '__keyhold_arg \'transit keys csr\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit keys set-certificate\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the engine'
complete -c keyhold -n '__keyhold_at \'transit keys set-certificate\'' -l version -x -d 'Key version: a number or "latest" (default)'
complete -c keyhold -n '__keyhold_at \'transit keys set-certificate\'' -l certificate-chain -x -d 'PEM certificates, leaf first'
complete -c keyhold -n '__keyhold_arg \'transit keys set-certificate\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit config-keys\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the engine'
complete -c keyhold -n '__keyhold_at \'transit config-keys\'' -l disable-upsert -x -d 'Encrypt no longer creates missing keys'
complete -c keyhold -n '__keyhold_at \'transit cache-config\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the engine'
complete -c keyhold -n '__keyhold_at \'transit cache-config\'' -l size -x -d 'Cache entries (0 = unbounded, else at least 10)'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l file -r -F -d 'key file: PEM private/public key, PKCS#8 DER, or raw key bytes ("-" = stdin)'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l type -x -d 'key type (import: default aes256-gcm96; import-version: the key\'s type)'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l hash-function -x -d 'OAEP hash: SHA1, SHA224, SHA256, SHA384, SHA512'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l base64 -d 'the file holds base64 text of the raw key'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l allow-rotation -d 'allow rotating the imported key inside keyhold'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l derived -d 'derive a key per request from a context'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l exportable -d 'allow export (one-way)'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l allow-plaintext-backup -d 'allow plaintext backup (one-way)'
complete -c keyhold -n '__keyhold_at \'transit import\'' -l auto-rotate-period -x -d 'auto-rotation period (needs --allow-rotation)'
complete -c keyhold -n '__keyhold_arg \'transit import\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit import-version\'' -l file -r -F -d 'key file: PEM private/public key, PKCS#8 DER, or raw key bytes ("-" = stdin)'
complete -c keyhold -n '__keyhold_at \'transit import-version\'' -l type -x -d 'key type (import: default aes256-gcm96; import-version: the key\'s type)'
complete -c keyhold -n '__keyhold_at \'transit import-version\'' -l hash-function -x -d 'OAEP hash: SHA1, SHA224, SHA256, SHA384, SHA512'
complete -c keyhold -n '__keyhold_at \'transit import-version\'' -l base64 -d 'the file holds base64 text of the raw key'
complete -c keyhold -n '__keyhold_at \'transit import-version\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit import-version\'' -l version -x -d 'complete this public-only version with its private key'
complete -c keyhold -n '__keyhold_arg \'transit import-version\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l file -r -F -d 'read the input from this file instead of stdin'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l base64 -d 'the input is already base64 text'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l context -x -d 'key-derivation context (base64)'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l associated-data -x -d 'additional authenticated data (base64)'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l key-version -x -d 'key version (0 = latest)'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l nonce -x -d 'nonce (convergent keys from Vault 0.6.1 only)'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l padding-scheme -x -d 'RSA keys: oaep or pkcs1v15'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l type -x -d 'key type when the key is created by this request'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l envelope -d 'encrypt locally in chunks with a fresh data key (any size)'
complete -c keyhold -n '__keyhold_at \'transit encrypt\'' -l output -r -F -d 'envelope: write to this file instead of stdout'
complete -c keyhold -n '__keyhold_arg \'transit encrypt\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit decrypt\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit decrypt\'' -l base64 -d 'print the plaintext base64-encoded instead of raw bytes'
complete -c keyhold -n '__keyhold_at \'transit decrypt\'' -l context -x -d 'key-derivation context (base64)'
complete -c keyhold -n '__keyhold_at \'transit decrypt\'' -l associated-data -x -d 'additional authenticated data (base64)'
complete -c keyhold -n '__keyhold_at \'transit decrypt\'' -l nonce -x -d 'nonce (convergent keys from Vault 0.6.1 only)'
complete -c keyhold -n '__keyhold_at \'transit decrypt\'' -l padding-scheme -x -d 'RSA keys: oaep or pkcs1v15'
complete -c keyhold -n '__keyhold_at \'transit decrypt\'' -l envelope -d 'decrypt an envelope made by `transit encrypt --envelope`'
complete -c keyhold -n '__keyhold_at \'transit decrypt\'' -l file -r -F -d 'envelope: read from this file instead of stdin'
complete -c keyhold -n '__keyhold_at \'transit decrypt\'' -l output -r -F -d 'envelope: write to this file instead of stdout'
complete -c keyhold -n '__keyhold_arg \'transit decrypt\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit rewrap\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit rewrap\'' -l context -x -d 'key-derivation context (base64)'
complete -c keyhold -n '__keyhold_at \'transit rewrap\'' -l key-version -x -d 'key version to encrypt with (0 = latest)'
complete -c keyhold -n '__keyhold_arg \'transit rewrap\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit datakey\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit datakey\'' -l bits -x -d 'data key size: 128, 256 or 512'
complete -c keyhold -n '__keyhold_at \'transit datakey\'' -l context -x -d 'key-derivation context (base64)'
complete -c keyhold -n '__keyhold_at \'transit datakey\'' -l key-version -x -d 'key version (0 = latest)'
complete -c keyhold -n '__keyhold_arg \'transit datakey\' 2' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit random\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit random\'' -l encoding -x -d 'base64 (default) or hex'
complete -c keyhold -n '__keyhold_at \'transit random\'' -l source -x -d 'platform (default) or all'
complete -c keyhold -n '__keyhold_at \'transit random\'' -l binary -d 'write the raw bytes instead of text'
complete -c keyhold -n '__keyhold_at \'transit hash\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit hash\'' -l file -r -F -d 'read the input from this file instead of stdin'
complete -c keyhold -n '__keyhold_at \'transit hash\'' -l base64 -d 'the input is already base64 text'
complete -c keyhold -n '__keyhold_at \'transit hash\'' -l encoding -x -d 'hex (default) or base64'
complete -c keyhold -n '__keyhold_at \'transit hmac\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit hmac\'' -l file -r -F -d 'read the input from this file instead of stdin'
complete -c keyhold -n '__keyhold_at \'transit hmac\'' -l base64 -d 'the input is already base64 text'
complete -c keyhold -n '__keyhold_at \'transit hmac\'' -l algorithm -x -d 'sha2-256 (default), sha2-224/384/512, sha3-*, sha1'
complete -c keyhold -n '__keyhold_at \'transit hmac\'' -l key-version -x -d 'key version (0 = latest)'
complete -c keyhold -n '__keyhold_arg \'transit hmac\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l file -r -F -d 'read the input from this file instead of stdin'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l base64 -d 'the input is already base64 text'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l hash-algorithm -x -d 'sha2-256 (default), sha2-224/384/512, sha3-*, sha1, none'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l prehashed -d 'the input is already a digest (raw bytes)'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l signature-algorithm -x -d 'RSA: pss (default) or pkcs1v15'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l marshaling-algorithm -x -d 'ECDSA: asn1 (default) or jws'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l salt-length -x -d 'RSA PSS: auto (default), hash, or bytes'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l context -x -d 'derived Ed25519: context (base64)'
complete -c keyhold -n '__keyhold_at \'transit sign\'' -l key-version -x -d 'key version (0 = latest)'
complete -c keyhold -n '__keyhold_arg \'transit sign\' 1' -a '(__keyhold_dyn transit-keys)'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l mount -x -a '(__keyhold_dyn transit-mounts)' -d 'mount path of the transit engine'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l file -r -F -d 'read the input from this file instead of stdin'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l base64 -d 'the input is already base64 text'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l hash-algorithm -x -d 'sha2-256 (default), sha2-224/384/512, sha3-*, sha1, none'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l prehashed -d 'the input is already a digest (raw bytes)'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l signature-algorithm -x -d 'RSA: pss (default) or pkcs1v15'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l marshaling-algorithm -x -d 'ECDSA: asn1 (default) or jws'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l salt-length -x -d 'RSA PSS: auto (default), hash, or bytes'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l context -x -d 'derived Ed25519: context (base64)'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l signature -x -d 'signature to check (vault:vN:...; @file or - allowed)'
complete -c keyhold -n '__keyhold_at \'transit verify\'' -l hmac -x -d 'HMAC to check (vault:vN:...; @file or - allowed)'
complete -c keyhold -n '__keyhold_arg \'transit verify\' 1' -a '(__keyhold_dyn transit-keys)'

# keyhold kv
complete -c keyhold -n '__keyhold_arg \'kv\' 1' -a 'put' -d 'Write a new version of a secret (replaces all keys)'
complete -c keyhold -n '__keyhold_arg \'kv\' 1' -a 'patch' -d 'Change some keys of a secret, keeping the others (creates a new version)'
complete -c keyhold -n '__keyhold_arg \'kv\' 1' -a 'get' -d 'Read a secret (current version, or --version=N)'
complete -c keyhold -n '__keyhold_arg \'kv\' 1' -a 'list' -d 'List secrets and folders (folders end with /)'
complete -c keyhold -n '__keyhold_arg \'kv\' 1' -a 'delete' -d 'Soft-delete the current version, or --versions (undo with kv undelete)'
complete -c keyhold -n '__keyhold_arg \'kv\' 1' -a 'undelete' -d 'Restore soft-deleted versions'
complete -c keyhold -n '__keyhold_arg \'kv\' 1' -a 'destroy' -d 'Permanently remove the data of versions (cannot be undone)'
complete -c keyhold -n '__keyhold_arg \'kv\' 1' -a 'metadata' -d 'Settings, custom metadata and version history of secrets'
complete -c keyhold -n '__keyhold_at \'kv put\'' -l cas -x -d 'check-and-set: write only if the current version is this (0 = only if absent)'
complete -c keyhold -n '__keyhold_at \'kv put\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv put\' 1' -a '(__keyhold_dyn kv-paths)'
complete -c keyhold -n '__keyhold_at \'kv patch\'' -l cas -x -d 'check-and-set: patch only if the current version is this'
complete -c keyhold -n '__keyhold_at \'kv patch\'' -l remove -x -d 'remove this key (repeatable)'
complete -c keyhold -n '__keyhold_at \'kv patch\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv patch\' 1' -a '(__keyhold_dyn kv-paths)'
complete -c keyhold -n '__keyhold_at \'kv get\'' -l version -x -d 'version to read; write it as --version=N (0 = current)'
complete -c keyhold -n '__keyhold_at \'kv get\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv get\' 1' -a '(__keyhold_dyn kv-paths)'
complete -c keyhold -n '__keyhold_at \'kv list\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv list\' 1' -a '(__keyhold_dyn kv-paths)'
complete -c keyhold -n '__keyhold_at \'kv delete\'' -l versions -x -d 'comma-separated versions to delete instead of the current one'
complete -c keyhold -n '__keyhold_at \'kv delete\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv delete\' 1' -a '(__keyhold_dyn kv-paths)'
complete -c keyhold -n '__keyhold_at \'kv undelete\'' -l versions -x -d 'comma-separated versions'
complete -c keyhold -n '__keyhold_at \'kv undelete\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv undelete\' 1' -a '(__keyhold_dyn kv-paths)'
complete -c keyhold -n '__keyhold_at \'kv destroy\'' -l versions -x -d 'comma-separated versions'
complete -c keyhold -n '__keyhold_at \'kv destroy\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv destroy\' 1' -a '(__keyhold_dyn kv-paths)'

# keyhold kv metadata
complete -c keyhold -n '__keyhold_arg \'kv metadata\' 1' -a 'get' -d 'Show the metadata and version history of a secret'
complete -c keyhold -n '__keyhold_arg \'kv metadata\' 1' -a 'put' -d 'Create or replace the settings and custom metadata of a secret (no new version)'
complete -c keyhold -n '__keyhold_arg \'kv metadata\' 1' -a 'patch' -d 'Change some settings or custom metadata keys of a secret'
complete -c keyhold -n '__keyhold_arg \'kv metadata\' 1' -a 'delete' -d 'Delete a secret entirely: all versions and its metadata'
complete -c keyhold -n '__keyhold_at \'kv metadata get\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv metadata get\' 1' -a '(__keyhold_dyn kv-paths)'
complete -c keyhold -n '__keyhold_at \'kv metadata put\'' -l max-versions -x -d 'versions to keep (0 = engine setting)'
complete -c keyhold -n '__keyhold_at \'kv metadata put\'' -l cas-required -x -d 'require check-and-set on writes'
complete -c keyhold -n '__keyhold_at \'kv metadata put\'' -l delete-version-after -x -d 'soft-delete versions this long after writing, e.g.'
complete -c keyhold -n '__keyhold_at \'kv metadata put\'' -l custom-metadata -x -d 'custom metadata pair (repeatable)'
complete -c keyhold -n '__keyhold_at \'kv metadata put\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv metadata put\' 1' -a '(__keyhold_dyn kv-paths)'
complete -c keyhold -n '__keyhold_at \'kv metadata patch\'' -l max-versions -x -d 'versions to keep (0 = engine setting)'
complete -c keyhold -n '__keyhold_at \'kv metadata patch\'' -l cas-required -x -d 'require check-and-set on writes'
complete -c keyhold -n '__keyhold_at \'kv metadata patch\'' -l delete-version-after -x -d 'soft-delete versions this long after writing, e.g.'
complete -c keyhold -n '__keyhold_at \'kv metadata patch\'' -l custom-metadata -x -d 'custom metadata pair (repeatable)'
complete -c keyhold -n '__keyhold_at \'kv metadata patch\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_at \'kv metadata patch\'' -l remove-custom-metadata -x -d 'remove this custom metadata key (repeatable)'
complete -c keyhold -n '__keyhold_arg \'kv metadata patch\' 1' -a '(__keyhold_dyn kv-paths)'
complete -c keyhold -n '__keyhold_at \'kv metadata delete\'' -l mount -x -a '(__keyhold_dyn kv-mounts)' -d 'KV mount; then PATH is relative to it (default: resolved from PATH)'
complete -c keyhold -n '__keyhold_arg \'kv metadata delete\' 1' -a '(__keyhold_dyn kv-paths)'

# keyhold audit
complete -c keyhold -n '__keyhold_arg \'audit\' 1' -a 'enable' -d 'Enable an audit device'
complete -c keyhold -n '__keyhold_arg \'audit\' 1' -a 'disable' -d 'Disable an audit device (its log file is kept)'
complete -c keyhold -n '__keyhold_arg \'audit\' 1' -a 'list' -d 'List enabled audit devices'
complete -c keyhold -n '__keyhold_at \'audit enable\'' -l path -x -d 'where to enable the device (default: the type name)'
complete -c keyhold -n '__keyhold_at \'audit enable\'' -l description -x -d 'human description'
complete -c keyhold -n '__keyhold_at \'audit enable\'' -l local -d 'accepted for compatibility'
complete -c keyhold -n '__keyhold_arg \'audit disable\' 1' -a '(__keyhold_dyn audit-devices)'
complete -c keyhold -n '__keyhold_at \'audit list\'' -l detailed -d 'also show options'
complete -c keyhold -n '__keyhold_arg \'completion\' 1' -a 'bash zsh fish'
complete -c keyhold -n '__keyhold_at \'openapi\'' -l offline -d 'build it from the route tables with the dev mounts (transit/, secret/), witho...'
complete -c keyhold -n '__keyhold_at \'openapi\'' -l generic-mount-paths -d 'replace mount paths with {<mount>_mount_path} parameters'
complete -c keyhold -n '__keyhold_arg \'path-help\' 1' -a '(__keyhold_dyn mounts)'
complete -c keyhold -n '__keyhold_arg \'help\' 1+' -a 'exit-codes environment formats server status login operator read write list delete token policy secrets transit kv audit completion openapi path-help help'

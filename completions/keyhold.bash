# bash completion for keyhold                                  -*- shell-script -*-
# Generated from the command tree by `npm run docs` (src/docs/completion-bash.ts); do not edit.
# Install:  keyhold completion bash > ~/.local/share/bash-completion/completions/keyhold
#     or:   source <(keyhold completion bash)
# Key names, KV paths, mounts and destination names come from the daemon (`keyhold __complete`).

# Sets _kh_subs, _kh_opts and _kh_vopts (flags taking a value) for the command path "$1".
_keyhold_node() {
  _kh_subs=''
  _kh_opts='-v --version --address --token --format --field --wrap-ttl -h --help'
  _kh_vopts='--address --token --format --field --wrap-ttl'
  case "$1" in
    '') _kh_subs='server status version operator read write list delete token policy secrets login auth transit kv sync audit managed-keys run env agent unwrap completion openapi path-help help service quota monitor' ;;
    'server') _kh_opts='--dev --dev-root-token --config --socket --no-socket --listen --tls-cert --tls-key --storage-path --max-request-size --log-level --keychain -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--dev-root-token --config --socket --listen --tls-cert --tls-key --storage-path --max-request-size --log-level --keychain --address --token --format --field --wrap-ttl' ;;
    'operator') _kh_subs='init unseal rekey step-down migrate seal rotate key-status generate-root snapshot' ;;
    'operator init') _kh_opts='--key-shares --key-threshold --recovery-shares --recovery-threshold --pgp-keys --root-token-pgp-key --recovery-pgp-keys --status --no-keychain -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--key-shares --key-threshold --recovery-shares --recovery-threshold --pgp-keys --root-token-pgp-key --recovery-pgp-keys --address --token --format --field --wrap-ttl' ;;
    'operator unseal') _kh_opts='--reset --migrate -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'operator rekey') _kh_opts='--init --cancel --status --key-shares --key-threshold --nonce --target --verify -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--key-shares --key-threshold --nonce --target --address --token --format --field --wrap-ttl' ;;
    'operator migrate') _kh_opts='--config --start --reset --max-parallel -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--config --start --max-parallel --address --token --format --field --wrap-ttl' ;;
    'operator seal') _kh_opts='-y --yes -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'operator generate-root') _kh_opts='--init --cancel --status --generate-otp --otp --decode --pgp-key --nonce -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--otp --decode --pgp-key --nonce --address --token --format --field --wrap-ttl' ;;
    'operator snapshot') _kh_subs='save restore inspect' ;;
    'operator snapshot restore') _kh_opts='--force -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'write') _kh_opts='-f --force -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'token') _kh_subs='create lookup revoke' ;;
    'token create') _kh_opts='--policy --policies --ttl --explicit-max-ttl --num-uses --display-name --orphan --role --period --type --no-default-policy --renewable -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--policy --policies --ttl --explicit-max-ttl --num-uses --display-name --role --period --type --renewable --address --token --format --field --wrap-ttl' ;;
    'token lookup') _kh_opts='--accessor -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--accessor --address --token --format --field --wrap-ttl' ;;
    'token revoke') _kh_opts='--accessor --self -y --yes -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--accessor --address --token --format --field --wrap-ttl' ;;
    'policy') _kh_subs='write read list delete' ;;
    'policy delete') _kh_opts='-y --yes -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'secrets') _kh_subs='enable disable list' ;;
    'secrets enable') _kh_opts='--path --description --version -v --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--path --description --version --address --token --format --field --wrap-ttl' ;;
    'secrets disable') _kh_opts='-y --yes -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'secrets list') _kh_opts='--detailed -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'login') _kh_opts='--method --path --no-store --client-cert --client-key -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--method --path --client-cert --client-key --address --token --format --field --wrap-ttl' ;;
    'auth') _kh_subs='enable disable list tune' ;;
    'auth enable') _kh_opts='--path --description --default-lease-ttl --max-lease-ttl --token-type --listing-visibility -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--path --description --default-lease-ttl --max-lease-ttl --token-type --listing-visibility --address --token --format --field --wrap-ttl' ;;
    'auth list') _kh_opts='--detailed -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'auth tune') _kh_opts='--description --default-lease-ttl --max-lease-ttl --token-type --listing-visibility -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--description --default-lease-ttl --max-lease-ttl --token-type --listing-visibility --address --token --format --field --wrap-ttl' ;;
    'transit') _kh_subs='keys config-keys cache-config import import-version encrypt decrypt rewrap datakey random hash hmac sign verify jwt' ;;
    'transit keys') _kh_subs='read delete export backup restore wrapping-key byok-export list create config rotate trim csr set-certificate' ;;
    'transit keys read') _kh_opts='--mount --context -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --context --address --token --format --field --wrap-ttl' ;;
    'transit keys delete') _kh_opts='--mount -y --yes -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --address --token --format --field --wrap-ttl' ;;
    'transit keys export') _kh_opts='--mount --output -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --output --address --token --format --field --wrap-ttl' ;;
    'transit keys backup') _kh_opts='--mount --output -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --output --address --token --format --field --wrap-ttl' ;;
    'transit keys restore') _kh_opts='--mount --backup --force -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --backup --address --token --format --field --wrap-ttl' ;;
    'transit keys wrapping-key') _kh_opts='--mount -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --address --token --format --field --wrap-ttl' ;;
    'transit keys byok-export') _kh_opts='--mount --hash --output -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --hash --output --address --token --format --field --wrap-ttl' ;;
    'transit keys list') _kh_opts='--mount -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --address --token --format --field --wrap-ttl' ;;
    'transit keys create') _kh_opts='--mount --type --derived --convergent-encryption --exportable --allow-plaintext-backup --key-size --auto-rotate-period --managed-key-name --managed-key-id --managed-key --parameter-set --hybrid-key-type-pqc --hybrid-key-type-ec --context -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --type --derived --convergent-encryption --exportable --allow-plaintext-backup --key-size --auto-rotate-period --managed-key-name --managed-key-id --managed-key --parameter-set --hybrid-key-type-pqc --hybrid-key-type-ec --context --address --token --format --field --wrap-ttl' ;;
    'transit keys config') _kh_opts='--mount --min-decryption-version --min-encryption-version --deletion-allowed --exportable --allow-plaintext-backup --auto-rotate-period --disallow-sha1 --public-jwks -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --min-decryption-version --min-encryption-version --deletion-allowed --exportable --allow-plaintext-backup --auto-rotate-period --disallow-sha1 --public-jwks --address --token --format --field --wrap-ttl' ;;
    'transit keys rotate') _kh_opts='--mount --managed-key-name --managed-key-id --managed-key -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --managed-key-name --managed-key-id --managed-key --address --token --format --field --wrap-ttl' ;;
    'transit keys trim') _kh_opts='--mount --min-available-version -y --yes -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --min-available-version --address --token --format --field --wrap-ttl' ;;
    'transit keys csr') _kh_opts='--mount --version --csr -v --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --version --csr --address --token --format --field --wrap-ttl' ;;
    'transit keys set-certificate') _kh_opts='--mount --version --certificate-chain -v --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --version --certificate-chain --address --token --format --field --wrap-ttl' ;;
    'transit config-keys') _kh_opts='--mount --disable-upsert -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --disable-upsert --address --token --format --field --wrap-ttl' ;;
    'transit cache-config') _kh_opts='--mount --size -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --size --address --token --format --field --wrap-ttl' ;;
    'transit import') _kh_opts='--file --type --hash-function --base64 --mount --allow-rotation --derived --exportable --allow-plaintext-backup --auto-rotate-period -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--file --type --hash-function --mount --auto-rotate-period --address --token --format --field --wrap-ttl' ;;
    'transit import-version') _kh_opts='--file --type --hash-function --base64 --mount --version -v --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--file --type --hash-function --mount --version --address --token --format --field --wrap-ttl' ;;
    'transit encrypt') _kh_opts='--mount --file --base64 --context --associated-data --key-version --nonce --padding-scheme --type --envelope --output -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --file --context --associated-data --key-version --nonce --padding-scheme --type --output --address --token --format --field --wrap-ttl' ;;
    'transit decrypt') _kh_opts='--mount --base64 --context --associated-data --nonce --padding-scheme --envelope --file --output -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --context --associated-data --nonce --padding-scheme --file --output --address --token --format --field --wrap-ttl' ;;
    'transit rewrap') _kh_opts='--mount --context --key-version -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --context --key-version --address --token --format --field --wrap-ttl' ;;
    'transit datakey') _kh_opts='--mount --bits --context --key-version -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --bits --context --key-version --address --token --format --field --wrap-ttl' ;;
    'transit random') _kh_opts='--mount --encoding --source --binary -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --encoding --source --address --token --format --field --wrap-ttl' ;;
    'transit hash') _kh_opts='--mount --file --base64 --encoding -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --file --encoding --address --token --format --field --wrap-ttl' ;;
    'transit hmac') _kh_opts='--mount --file --base64 --algorithm --key-version -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --file --algorithm --key-version --address --token --format --field --wrap-ttl' ;;
    'transit sign') _kh_opts='--mount --file --base64 --hash-algorithm --prehashed --signature-algorithm --marshaling-algorithm --salt-length --context --key-version -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --file --hash-algorithm --signature-algorithm --marshaling-algorithm --salt-length --context --key-version --address --token --format --field --wrap-ttl' ;;
    'transit verify') _kh_opts='--mount --file --base64 --hash-algorithm --prehashed --signature-algorithm --marshaling-algorithm --salt-length --context --signature --hmac -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --file --hash-algorithm --signature-algorithm --marshaling-algorithm --salt-length --context --signature --hmac --address --token --format --field --wrap-ttl' ;;
    'transit jwt') _kh_subs='sign verify' ;;
    'transit jwt sign') _kh_opts='--mount --claims --header --ttl --iss --aud --key-version --batch-input -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --claims --header --ttl --iss --aud --key-version --batch-input --address --token --format --field --wrap-ttl' ;;
    'transit jwt verify') _kh_opts='--mount --file --iss --aud --leeway -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --file --iss --aud --leeway --address --token --format --field --wrap-ttl' ;;
    'kv') _kh_subs='put patch get list delete undelete destroy metadata' ;;
    'kv put') _kh_opts='--cas --mount -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--cas --mount --address --token --format --field --wrap-ttl' ;;
    'kv patch') _kh_opts='--cas --remove --mount -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--cas --remove --mount --address --token --format --field --wrap-ttl' ;;
    'kv get') _kh_opts='--version --mount -v --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--version --mount --address --token --format --field --wrap-ttl' ;;
    'kv list') _kh_opts='--mount -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --address --token --format --field --wrap-ttl' ;;
    'kv delete') _kh_opts='--versions --mount -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--versions --mount --address --token --format --field --wrap-ttl' ;;
    'kv undelete') _kh_opts='--versions --mount -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--versions --mount --address --token --format --field --wrap-ttl' ;;
    'kv destroy') _kh_opts='--versions --mount -y --yes -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--versions --mount --address --token --format --field --wrap-ttl' ;;
    'kv metadata') _kh_subs='get put patch delete' ;;
    'kv metadata get') _kh_opts='--mount -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --address --token --format --field --wrap-ttl' ;;
    'kv metadata put') _kh_opts='--max-versions --cas-required --delete-version-after --custom-metadata --mount -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--max-versions --cas-required --delete-version-after --custom-metadata --mount --address --token --format --field --wrap-ttl' ;;
    'kv metadata patch') _kh_opts='--max-versions --cas-required --delete-version-after --custom-metadata --mount --remove-custom-metadata -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--max-versions --cas-required --delete-version-after --custom-metadata --mount --remove-custom-metadata --address --token --format --field --wrap-ttl' ;;
    'kv metadata delete') _kh_opts='--mount -y --yes -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --address --token --format --field --wrap-ttl' ;;
    'sync') _kh_subs='dest assoc status config' ;;
    'sync dest') _kh_subs='create update read list delete' ;;
    'sync dest create') _kh_opts='--access-key-id --secret-access-key --region --endpoint-url --role-arn --external-id --role-session-name --sts-endpoint --identity-token-audience --identity-token-ttl --identity-token-key --kms-key-id --replica-regions --key-vault-uri --client-id --client-secret --tenant-id --cloud --authority-host --credentials --project-id --service-account-email --iam-credentials-endpoint --replication-locations --kms-key-name --access-token --app-name --installation-id --secrets-location --repository-owner --repository-name --environment-name --organization-name --organization-visibility --selected-repository-ids --selected-repository-names --team-id --deployment-environments --group-id --base-url --environment-scope --protected --masked --raw --secret-name-template --granularity --custom-tag --allowed-ipv4-address --allowed-ipv6-address --allowed-port --disable-strict-networking -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--access-key-id --secret-access-key --region --endpoint-url --role-arn --external-id --role-session-name --sts-endpoint --identity-token-audience --identity-token-ttl --identity-token-key --kms-key-id --replica-regions --key-vault-uri --client-id --client-secret --tenant-id --cloud --authority-host --credentials --project-id --service-account-email --iam-credentials-endpoint --replication-locations --kms-key-name --access-token --app-name --installation-id --secrets-location --repository-owner --repository-name --environment-name --organization-name --organization-visibility --selected-repository-ids --selected-repository-names --team-id --deployment-environments --group-id --base-url --environment-scope --protected --masked --raw --secret-name-template --granularity --custom-tag --allowed-ipv4-address --allowed-ipv6-address --allowed-port --address --token --format --field --wrap-ttl' ;;
    'sync dest update') _kh_opts='--access-key-id --secret-access-key --region --endpoint-url --role-arn --external-id --role-session-name --sts-endpoint --identity-token-audience --identity-token-ttl --identity-token-key --kms-key-id --replica-regions --key-vault-uri --client-id --client-secret --tenant-id --cloud --authority-host --credentials --project-id --service-account-email --iam-credentials-endpoint --replication-locations --kms-key-name --access-token --app-name --installation-id --secrets-location --repository-owner --repository-name --environment-name --organization-name --organization-visibility --selected-repository-ids --selected-repository-names --team-id --deployment-environments --group-id --base-url --environment-scope --protected --masked --raw --secret-name-template --granularity --custom-tag --allowed-ipv4-address --allowed-ipv6-address --allowed-port --disable-strict-networking -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--access-key-id --secret-access-key --region --endpoint-url --role-arn --external-id --role-session-name --sts-endpoint --identity-token-audience --identity-token-ttl --identity-token-key --kms-key-id --replica-regions --key-vault-uri --client-id --client-secret --tenant-id --cloud --authority-host --credentials --project-id --service-account-email --iam-credentials-endpoint --replication-locations --kms-key-name --access-token --app-name --installation-id --secrets-location --repository-owner --repository-name --environment-name --organization-name --organization-visibility --selected-repository-ids --selected-repository-names --team-id --deployment-environments --group-id --base-url --environment-scope --protected --masked --raw --secret-name-template --granularity --custom-tag --allowed-ipv4-address --allowed-ipv6-address --allowed-port --address --token --format --field --wrap-ttl' ;;
    'sync dest delete') _kh_opts='--purge --force -y --yes -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'sync assoc') _kh_subs='set remove list' ;;
    'sync assoc set') _kh_opts='--mount --secret -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --secret --address --token --format --field --wrap-ttl' ;;
    'sync assoc remove') _kh_opts='--mount --secret -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--mount --secret --address --token --format --field --wrap-ttl' ;;
    'sync status') _kh_opts='--type --name --failed --watch -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--type --name --watch --address --token --format --field --wrap-ttl' ;;
    'sync config') _kh_opts='--disabled --queue-capacity --reset -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--disabled --queue-capacity --address --token --format --field --wrap-ttl' ;;
    'audit') _kh_subs='enable disable list' ;;
    'audit enable') _kh_opts='--path --description --local -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--path --description --address --token --format --field --wrap-ttl' ;;
    'audit disable') _kh_opts='-y --yes -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'audit list') _kh_opts='--detailed -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'managed-keys') _kh_subs='create list read delete test-sign' ;;
    'managed-keys create') _kh_opts='--library --slot --token-label --key-label --key-id --mechanism --key-bits --curve --max-parallel --rsa-oaep-hash --usages --kms-key --key-type --region --endpoint --allowed-ipv4-address --allowed-port --allow-generate-key --allow-replace-key --allow-store-key --any-mount --force-rw-session --disable-strict-networking --pin --access-key --secret-key -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--library --slot --token-label --key-label --key-id --mechanism --key-bits --curve --max-parallel --rsa-oaep-hash --usages --kms-key --key-type --region --endpoint --allowed-ipv4-address --allowed-port --pin --access-key --secret-key --address --token --format --field --wrap-ttl' ;;
    'managed-keys test-sign') _kh_opts='--use-pss --hash-algorithm -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--hash-algorithm --address --token --format --field --wrap-ttl' ;;
    'run') _kh_opts='--env-file --watch --signal --watch-interval --debounce --kill-timeout -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--env-file --signal --watch-interval --debounce --kill-timeout --address --token --format --field --wrap-ttl' ;;
    'env') _kh_opts='--env-file --output -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--env-file --output --address --token --format --field --wrap-ttl' ;;
    'agent') _kh_subs='generate-config'; _kh_opts='--config --log-level --exit-after-auth -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--config --log-level --address --token --format --field --wrap-ttl' ;;
    'agent generate-config') _kh_opts='--type --path --exec -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--type --path --exec --address --token --format --field --wrap-ttl' ;;
    'openapi') _kh_opts='--offline --generic-mount-paths -v --version --address --token --format --field --wrap-ttl -h --help' ;;
    'service') _kh_subs='install uninstall status' ;;
    'service install') _kh_opts='--config --no-start -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--config --address --token --format --field --wrap-ttl' ;;
    'quota') _kh_subs='list read write delete' ;;
    'monitor') _kh_opts='--log-level --log-format -v --version --address --token --format --field --wrap-ttl -h --help'; _kh_vopts='--log-level --log-format --address --token --format --field --wrap-ttl' ;;
  esac
}

# How the value of option "$2" (or positional argument number "$2", "+" for the rest) of command
# path "$1" completes: "w:WORDS", "d:SOURCE" (ask the daemon), "f" (files) or "n" (nothing).
_keyhold_values() {
  case "$1|$2" in
    'server|--config') echo 'f' ;;
    'server|--socket') echo 'f' ;;
    'server|--tls-cert') echo 'f' ;;
    'server|--tls-key') echo 'f' ;;
    'server|--storage-path') echo 'f' ;;
    'server|--log-level') echo 'w:debug info warn error off' ;;
    'server|--keychain') echo 'w:os none' ;;
    'operator unseal|1') echo 'n' ;;
    'operator rekey|--target') echo 'w:barrier recovery' ;;
    'operator rekey|1') echo 'n' ;;
    'operator migrate|--config') echo 'f' ;;
    'operator generate-root|1') echo 'n' ;;
    'operator snapshot save|1') echo 'n' ;;
    'operator snapshot restore|1') echo 'n' ;;
    'operator snapshot inspect|1') echo 'n' ;;
    'read|1') echo 'd:mounts' ;;
    'read|2') echo 'n' ;;
    'read|+') echo 'n' ;;
    'write|1') echo 'd:mounts' ;;
    'write|2') echo 'n' ;;
    'write|+') echo 'n' ;;
    'list|1') echo 'd:mounts' ;;
    'delete|1') echo 'd:mounts' ;;
    'delete|2') echo 'n' ;;
    'delete|+') echo 'n' ;;
    'token create|--policy') echo 'd:policies' ;;
    'token lookup|1') echo 'n' ;;
    'token revoke|1') echo 'n' ;;
    'policy write|1') echo 'd:policies' ;;
    'policy write|2') echo 'f' ;;
    'policy read|1') echo 'd:policies' ;;
    'policy delete|1') echo 'd:policies' ;;
    'secrets enable|1') echo 'n' ;;
    'secrets disable|1') echo 'd:mounts' ;;
    'login|1') echo 'n' ;;
    'login|+') echo 'n' ;;
    'auth enable|1') echo 'n' ;;
    'auth disable|1') echo 'n' ;;
    'auth tune|1') echo 'n' ;;
    'transit keys read|--mount') echo 'd:transit-mounts' ;;
    'transit keys read|1') echo 'd:transit-keys' ;;
    'transit keys delete|--mount') echo 'd:transit-mounts' ;;
    'transit keys delete|1') echo 'd:transit-keys' ;;
    'transit keys export|--mount') echo 'd:transit-mounts' ;;
    'transit keys export|--output') echo 'f' ;;
    'transit keys export|1') echo 'w:encryption-key signing-key hmac-key public-key certificate-chain' ;;
    'transit keys export|2') echo 'd:transit-keys' ;;
    'transit keys export|3') echo 'n' ;;
    'transit keys backup|--mount') echo 'd:transit-mounts' ;;
    'transit keys backup|--output') echo 'f' ;;
    'transit keys backup|1') echo 'd:transit-keys' ;;
    'transit keys restore|--mount') echo 'd:transit-mounts' ;;
    'transit keys restore|1') echo 'd:transit-keys' ;;
    'transit keys wrapping-key|--mount') echo 'd:transit-mounts' ;;
    'transit keys byok-export|--mount') echo 'd:transit-mounts' ;;
    'transit keys byok-export|--output') echo 'f' ;;
    'transit keys byok-export|1') echo 'd:transit-keys' ;;
    'transit keys byok-export|2') echo 'd:transit-keys' ;;
    'transit keys byok-export|3') echo 'n' ;;
    'transit keys list|--mount') echo 'd:transit-mounts' ;;
    'transit keys create|--mount') echo 'd:transit-mounts' ;;
    'transit keys create|--type') echo 'w:aes128-cmac aes128-gcm96 aes192-cmac aes256-cmac aes256-gcm96 chacha20-poly1305 ecdsa-p256 ecdsa-p384 ecdsa-p521 ed25519 hmac hybrid ml-dsa rsa-2048 rsa-3072 rsa-4096 slh-dsa xchacha20-poly1305' ;;
    'transit keys create|1') echo 'd:transit-keys' ;;
    'transit keys config|--mount') echo 'd:transit-mounts' ;;
    'transit keys config|1') echo 'd:transit-keys' ;;
    'transit keys rotate|--mount') echo 'd:transit-mounts' ;;
    'transit keys rotate|1') echo 'd:transit-keys' ;;
    'transit keys trim|--mount') echo 'd:transit-mounts' ;;
    'transit keys trim|1') echo 'd:transit-keys' ;;
    'transit keys csr|--mount') echo 'd:transit-mounts' ;;
    'transit keys csr|1') echo 'd:transit-keys' ;;
    'transit keys set-certificate|--mount') echo 'd:transit-mounts' ;;
    'transit keys set-certificate|1') echo 'd:transit-keys' ;;
    'transit config-keys|--mount') echo 'd:transit-mounts' ;;
    'transit cache-config|--mount') echo 'd:transit-mounts' ;;
    'transit import|--file') echo 'f' ;;
    'transit import|--type') echo 'w:aes128-cmac aes128-gcm96 aes192-cmac aes256-cmac aes256-gcm96 chacha20-poly1305 ecdsa-p256 ecdsa-p384 ecdsa-p521 ed25519 hmac hybrid ml-dsa rsa-2048 rsa-3072 rsa-4096 slh-dsa xchacha20-poly1305' ;;
    'transit import|--mount') echo 'd:transit-mounts' ;;
    'transit import|1') echo 'd:transit-keys' ;;
    'transit import-version|--file') echo 'f' ;;
    'transit import-version|--type') echo 'w:aes128-cmac aes128-gcm96 aes192-cmac aes256-cmac aes256-gcm96 chacha20-poly1305 ecdsa-p256 ecdsa-p384 ecdsa-p521 ed25519 hmac hybrid ml-dsa rsa-2048 rsa-3072 rsa-4096 slh-dsa xchacha20-poly1305' ;;
    'transit import-version|--mount') echo 'd:transit-mounts' ;;
    'transit import-version|1') echo 'd:transit-keys' ;;
    'transit encrypt|--mount') echo 'd:transit-mounts' ;;
    'transit encrypt|--file') echo 'f' ;;
    'transit encrypt|--padding-scheme') echo 'w:oaep pkcs1v15' ;;
    'transit encrypt|--type') echo 'w:aes128-cmac aes128-gcm96 aes192-cmac aes256-cmac aes256-gcm96 chacha20-poly1305 ecdsa-p256 ecdsa-p384 ecdsa-p521 ed25519 hmac hybrid ml-dsa rsa-2048 rsa-3072 rsa-4096 slh-dsa xchacha20-poly1305' ;;
    'transit encrypt|--output') echo 'f' ;;
    'transit encrypt|1') echo 'd:transit-keys' ;;
    'transit decrypt|--mount') echo 'd:transit-mounts' ;;
    'transit decrypt|--padding-scheme') echo 'w:oaep pkcs1v15' ;;
    'transit decrypt|--file') echo 'f' ;;
    'transit decrypt|--output') echo 'f' ;;
    'transit decrypt|1') echo 'd:transit-keys' ;;
    'transit decrypt|2') echo 'n' ;;
    'transit rewrap|--mount') echo 'd:transit-mounts' ;;
    'transit rewrap|1') echo 'd:transit-keys' ;;
    'transit rewrap|2') echo 'n' ;;
    'transit datakey|--mount') echo 'd:transit-mounts' ;;
    'transit datakey|1') echo 'w:plaintext wrapped' ;;
    'transit datakey|2') echo 'd:transit-keys' ;;
    'transit random|--mount') echo 'd:transit-mounts' ;;
    'transit random|--encoding') echo 'w:base64 hex' ;;
    'transit random|1') echo 'n' ;;
    'transit hash|--mount') echo 'd:transit-mounts' ;;
    'transit hash|--file') echo 'f' ;;
    'transit hash|--encoding') echo 'w:base64 hex' ;;
    'transit hash|1') echo 'w:sha2-224 sha2-256 sha2-384 sha2-512 sha3-224 sha3-256 sha3-384 sha3-512' ;;
    'transit hmac|--mount') echo 'd:transit-mounts' ;;
    'transit hmac|--file') echo 'f' ;;
    'transit hmac|1') echo 'd:transit-keys' ;;
    'transit sign|--mount') echo 'd:transit-mounts' ;;
    'transit sign|--file') echo 'f' ;;
    'transit sign|--hash-algorithm') echo 'w:sha1 sha2-224 sha2-256 sha2-384 sha2-512 sha3-224 sha3-256 sha3-384 sha3-512 none' ;;
    'transit sign|--signature-algorithm') echo 'w:pss pkcs1v15' ;;
    'transit sign|--marshaling-algorithm') echo 'w:asn1 jws' ;;
    'transit sign|1') echo 'd:transit-keys' ;;
    'transit verify|--mount') echo 'd:transit-mounts' ;;
    'transit verify|--file') echo 'f' ;;
    'transit verify|--hash-algorithm') echo 'w:sha1 sha2-224 sha2-256 sha2-384 sha2-512 sha3-224 sha3-256 sha3-384 sha3-512 none' ;;
    'transit verify|--signature-algorithm') echo 'w:pss pkcs1v15' ;;
    'transit verify|--marshaling-algorithm') echo 'w:asn1 jws' ;;
    'transit verify|1') echo 'd:transit-keys' ;;
    'transit jwt sign|--mount') echo 'd:transit-mounts' ;;
    'transit jwt sign|1') echo 'd:transit-keys' ;;
    'transit jwt verify|--mount') echo 'd:transit-mounts' ;;
    'transit jwt verify|--file') echo 'f' ;;
    'transit jwt verify|1') echo 'd:transit-keys' ;;
    'kv put|--mount') echo 'd:kv-mounts' ;;
    'kv put|1') echo 'd:kv-paths' ;;
    'kv put|2') echo 'n' ;;
    'kv put|+') echo 'n' ;;
    'kv patch|--mount') echo 'd:kv-mounts' ;;
    'kv patch|1') echo 'd:kv-paths' ;;
    'kv patch|2') echo 'n' ;;
    'kv patch|+') echo 'n' ;;
    'kv get|--mount') echo 'd:kv-mounts' ;;
    'kv get|1') echo 'd:kv-paths' ;;
    'kv list|--mount') echo 'd:kv-mounts' ;;
    'kv list|1') echo 'd:kv-paths' ;;
    'kv delete|--mount') echo 'd:kv-mounts' ;;
    'kv delete|1') echo 'd:kv-paths' ;;
    'kv undelete|--mount') echo 'd:kv-mounts' ;;
    'kv undelete|1') echo 'd:kv-paths' ;;
    'kv destroy|--mount') echo 'd:kv-mounts' ;;
    'kv destroy|1') echo 'd:kv-paths' ;;
    'kv metadata get|--mount') echo 'd:kv-mounts' ;;
    'kv metadata get|1') echo 'd:kv-paths' ;;
    'kv metadata put|--mount') echo 'd:kv-mounts' ;;
    'kv metadata put|1') echo 'd:kv-paths' ;;
    'kv metadata patch|--mount') echo 'd:kv-mounts' ;;
    'kv metadata patch|1') echo 'd:kv-paths' ;;
    'kv metadata delete|--mount') echo 'd:kv-mounts' ;;
    'kv metadata delete|1') echo 'd:kv-paths' ;;
    'sync dest create|1') echo 'w:provider-a-sm provider-b-kv provider-c-sm repohost hosting-project gitlab' ;;
    'sync dest create|2') echo 'd:sync-destinations' ;;
    'sync dest create|3') echo 'n' ;;
    'sync dest create|+') echo 'n' ;;
    'sync dest update|1') echo 'w:provider-a-sm provider-b-kv provider-c-sm repohost hosting-project gitlab' ;;
    'sync dest update|2') echo 'd:sync-destinations' ;;
    'sync dest update|3') echo 'n' ;;
    'sync dest update|+') echo 'n' ;;
    'sync dest read|1') echo 'w:provider-a-sm provider-b-kv provider-c-sm repohost hosting-project gitlab' ;;
    'sync dest read|2') echo 'd:sync-destinations' ;;
    'sync dest list|1') echo 'w:provider-a-sm provider-b-kv provider-c-sm repohost hosting-project gitlab' ;;
    'sync dest delete|1') echo 'w:provider-a-sm provider-b-kv provider-c-sm repohost hosting-project gitlab' ;;
    'sync dest delete|2') echo 'd:sync-destinations' ;;
    'sync assoc set|--mount') echo 'd:kv-mounts' ;;
    'sync assoc set|--secret') echo 'd:kv-paths' ;;
    'sync assoc set|1') echo 'w:provider-a-sm provider-b-kv provider-c-sm repohost hosting-project gitlab' ;;
    'sync assoc set|2') echo 'd:sync-destinations' ;;
    'sync assoc remove|--mount') echo 'd:kv-mounts' ;;
    'sync assoc remove|--secret') echo 'd:kv-paths' ;;
    'sync assoc remove|1') echo 'w:provider-a-sm provider-b-kv provider-c-sm repohost hosting-project gitlab' ;;
    'sync assoc remove|2') echo 'd:sync-destinations' ;;
    'sync assoc list|1') echo 'w:provider-a-sm provider-b-kv provider-c-sm repohost hosting-project gitlab' ;;
    'sync assoc list|2') echo 'd:sync-destinations' ;;
    'sync status|--type') echo 'w:provider-a-sm provider-b-kv provider-c-sm repohost hosting-project gitlab' ;;
    'sync status|--name') echo 'd:sync-destinations' ;;
    'sync config|--disabled') echo 'w:true false' ;;
    'audit enable|1') echo 'n' ;;
    'audit enable|2') echo 'n' ;;
    'audit enable|+') echo 'n' ;;
    'audit disable|1') echo 'd:audit-devices' ;;
    'managed-keys create|1') echo 'n' ;;
    'managed-keys create|2') echo 'n' ;;
    'managed-keys list|1') echo 'n' ;;
    'managed-keys read|1') echo 'n' ;;
    'managed-keys read|2') echo 'n' ;;
    'managed-keys delete|1') echo 'n' ;;
    'managed-keys delete|2') echo 'n' ;;
    'managed-keys test-sign|1') echo 'n' ;;
    'managed-keys test-sign|2') echo 'n' ;;
    'run|1') echo 'n' ;;
    'run|+') echo 'n' ;;
    'env|--output') echo 'f' ;;
    'agent|--config') echo 'f' ;;
    'agent generate-config|1') echo 'n' ;;
    'unwrap|1') echo 'n' ;;
    'completion|1') echo 'w:bash zsh fish' ;;
    'path-help|1') echo 'd:mounts' ;;
    'help|1') echo 'w:exit-codes environment formats server status version operator read write list delete token policy secrets login auth transit kv sync audit managed-keys run env agent unwrap completion openapi path-help help service quota monitor' ;;
    'help|+') echo 'w:exit-codes environment formats server status version operator read write list delete token policy secrets login auth transit kv sync audit managed-keys run env agent unwrap completion openapi path-help help service quota monitor' ;;
    'service install|--config') echo 'f' ;;
    'quota read|1') echo 'n' ;;
    'quota write|1') echo 'n' ;;
    'quota write|2') echo 'n' ;;
    'quota write|+') echo 'n' ;;
    'quota delete|1') echo 'n' ;;
    *'|--format') echo 'w:table json yaml raw dotenv shell jwk jwks pem' ;;
  esac
}

_keyhold_complete_values() {
  local IFS=$' \t\n'
  case "$1" in
    w:*) COMPREPLY=($(compgen -W "${1#w:}" -- "$cur")) ;;
    d:*)
      local out
      out=$("${COMP_WORDS[0]}" __complete "${1#d:}" -- "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null)
      IFS=$'\n'
      COMPREPLY=($(compgen -W "$out" -- "$cur"))
      if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == */ ]]; then compopt -o nospace 2>/dev/null; fi
      ;;
    f)
      COMPREPLY=($(compgen -f -- "$cur"))
      compopt -o filenames 2>/dev/null
      ;;
  esac
  return 0
}

_keyhold() {
  local cur="${COMP_WORDS[COMP_CWORD]}" path='' w i p=0 expect=''
  local _kh_subs _kh_opts _kh_vopts
  COMPREPLY=()
  _keyhold_node ''
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    if [[ -n $expect ]]; then
      [[ $w == = ]] && continue
      expect=''
      continue
    fi
    case "$w" in
      --*=*) ;;
      -*) [[ " $_kh_vopts " == *" $w "* ]] && expect="$w" ;;
      *)
        if [[ $p -eq 0 && " $_kh_subs " == *" $w "* ]]; then
          path="${path:+$path }$w"
          _keyhold_node "$path"
        else
          p=$((p + 1))
        fi
        ;;
    esac
  done
  [[ $cur == = ]] && cur=''
  if [[ -n $expect ]]; then
    _keyhold_complete_values "$(_keyhold_values "$path" "$expect")"
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$_kh_opts" -- "$cur"))
    return 0
  fi
  if [[ $p -eq 0 && -n $_kh_subs ]]; then
    COMPREPLY=($(compgen -W "$_kh_subs" -- "$cur"))
    return 0
  fi
  local v
  v=$(_keyhold_values "$path" $((p + 1)))
  [[ -z $v ]] && v=$(_keyhold_values "$path" +)
  _keyhold_complete_values "$v"
}

complete -F _keyhold keyhold

{{ identity_lookup_sql([['acme', 'email:a@example.com'], ['acme', 'crm:1'], ['globex', 'email:b@example.com']]) }}

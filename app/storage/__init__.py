"""Storage: Peewee models, queries, the table store and the connection pool."""

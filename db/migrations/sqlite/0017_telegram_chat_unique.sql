-- Taskgraph schema, part 18: a Telegram chat belongs to one user. A button
-- press in a chat is answered as the user who holds the chat id; two users
-- holding one id made every press of its owner refused. createUser answers
-- a taken id with CONFLICT (field telegramChatId).
--
-- Existing duplicates are resolved first: the user who has held the id the
-- longest (oldest created_at, then smallest id) keeps it, the others lose it
-- (NULL: no chat), so that the unique index can be built.
--
-- SQLite dialect. The postgres tree's 0018 has the same index name.

-- +goose Up

UPDATE users SET telegram_chat_id = NULL
WHERE telegram_chat_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM users o
    WHERE o.telegram_chat_id = users.telegram_chat_id
      AND (o.created_at < users.created_at OR (o.created_at = users.created_at AND o.id < users.id)));

CREATE UNIQUE INDEX users_telegram_chat_id_key ON users (telegram_chat_id) WHERE telegram_chat_id IS NOT NULL;

-- +goose Down

DROP INDEX users_telegram_chat_id_key;

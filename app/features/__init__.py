"""Features beside the tables: accounts, stats, score sheets, replays."""

/* fx-store-vfs.h: the sqlite VFS the store opens workspaces with (the default one, whose main-database writes can be
   queued to a writer thread during a bulk import). Internal to engine/store. */
#pragma once

#include <sqlite3.h>

/* sqlite3_file_control (db, "main", FX_STORE_FCNTL_QUEUE_WRITES, &on): on (int, non-zero) starts queuing the main
   database's writes, 0 drains the queue and stops; returns a write error the queue met, if any. Outside the range
   sqlite's own controls use. */
#define FX_STORE_FCNTL_QUEUE_WRITES 0x46585701

/* Registers the VFS once (not as the default) and returns its name; NULL when it could not be registered (the store
   then opens files with the default VFS). Thread-safe. */
const char *fx_store_vfs_name (void);

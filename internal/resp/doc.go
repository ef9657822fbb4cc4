// Package resp is the Redis protocol (RESP2) as learn's redis-ttl
// scenario needs it, both ends of the wire: the keys of the broken "keys
// in Redis" design really cross a TCP connection to a separate store, so
// a crash between the two writes loses what it loses in production.
//
// It holds two halves:
//
//   - [Client] (client.go): one TCP connection, one command at a time
//     ([Client.Do]: GET, SET … PX and the like), its reply read as a
//     string, an int64, an array, [ErrNil] or an [Error]. sim/api's
//     RedisKeys uses it. It replaces a full Redis client library.
//   - [Server] (server.go): a small Redis server inside learn, on a
//     loopback port, serving exactly the commands learn sends — GET, SET
//     with EX or PX and NX or XX, DEL, PING — with every key's expiry read
//     from a [Clock] that the scenario moves (a day passes in a step).
//     It is a teaching stand-in, not a Redis: one keyspace, no
//     persistence, no other command (each answered "-ERR unknown
//     command"). sim's stage starts one when a design keeps keys in
//     Redis. It replaces an embedded Redis library (and its Lua
//     interpreter, 2 MiB of learn's binary).
//
// Start with [NewServer] and [Server.Start], then [New] and [Client.Do];
// the wire format both share is RESP2: a request is an array of bulk
// strings ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), a reply one value.
package resp

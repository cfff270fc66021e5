#if PipeWire
import MediaDevicesCore
import CSDBus
import Glibc

/// One client connection to a D-Bus bus through sd-bus. Owns the `sd_bus`: `deinit` flushes and
/// closes it. Used by one thread at a time.
final class DBusConnection {
    /// The `sd_bus`.
    let bus: OpaquePointer
    /// This connection's unique name on the bus (`:1.42`).
    let uniqueName: String

    /// Connects to the bus at `address` (a D-Bus address such as `unix:path=/run/user/1000/bus`),
    /// or to the session bus (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`) when `nil`.
    /// Throws `DBusFailure` when there is no bus to connect to.
    init(address: String?) throws {
        var created: OpaquePointer?
        if let address {
            var result = sd_bus_new(&created)
            if result >= 0, let created {
                result = sd_bus_set_address(created, address)
                if result >= 0 { result = sd_bus_set_bus_client(created, 1) }
                if result >= 0 { result = sd_bus_start(created) }
                if result < 0 { sd_bus_unref(created) }
            }
            if result < 0 { throw DBusFailure(name: "connect", message: "sd_bus_start(\(address))", errno: -result) }
        } else {
            let result = sd_bus_open_user(&created)
            if result < 0 { throw DBusFailure(name: "connect", message: "sd_bus_open_user", errno: -result) }
        }
        bus = created!
        var name: UnsafePointer<CChar>?
        let result = sd_bus_get_unique_name(bus, &name)
        if result < 0 {
            sd_bus_flush_close_unref(bus)
            throw DBusFailure(name: "connect", message: "sd_bus_get_unique_name", errno: -result)
        }
        uniqueName = String(cString: name!)
    }

    deinit { sd_bus_flush_close_unref(bus) }

    /// Calls `member` of `interface` on `path` at `destination`, with the arguments `append`
    /// writes, and returns the reply. Throws `DBusFailure` with the error the peer answered.
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String,
              timeout: Duration = .seconds(25), append: (DBusWriter) throws -> Void = { _ in }) throws -> DBusMessage {
        let message = try methodCall(destination, path, interface, member, append: append)
        defer { sd_bus_message_unref(message) }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let result = sd_bus_call(bus, message, DBusConnection.microseconds(timeout), &error, &reply)
        guard result >= 0, let reply else {
            throw DBusFailure(name: error.name.map { String(cString: $0) } ?? "sd_bus_call",
                              message: error.message.map { String(cString: $0) } ?? String(cString: strerror(-result)), errno: -result)
        }
        return DBusMessage(taking: reply)
    }

    /// Sends a call of `member` (no arguments) that expects no reply, and flushes it: for
    /// closing what a peer may be too busy to answer for (a portal whose backend hangs in a
    /// dialog), without waiting for it.
    func send(_ destination: String, _ path: String, _ interface: String, _ member: String) {
        var message: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &message, destination, path, interface, member) >= 0, let message else { return }
        defer { sd_bus_message_unref(message) }
        _ = sd_bus_message_set_expect_reply(message, 0)
        _ = sd_bus_send(bus, message, nil)
        _ = sd_bus_flush(bus)
    }

    /// The value of property `name` of `interface` on `path` at `destination`
    /// (`org.freedesktop.DBus.Properties.Get`).
    func property(_ destination: String, _ path: String, _ interface: String, _ name: String) throws -> DBusValue {
        let reply = try call(destination, path, "org.freedesktop.DBus.Properties", "Get") {
            try $0.append(string: interface)
            try $0.append(string: name)
        }
        guard let value = try reply.read() else { throw DBusFailure(name: "read", message: "Get \(name): empty reply", errno: EBADMSG) }
        return value
    }

    /// A new method call message (the caller unrefs it) with the arguments `append` writes.
    private func methodCall(_ destination: String, _ path: String, _ interface: String, _ member: String,
                            append: (DBusWriter) throws -> Void) throws -> OpaquePointer {
        var message: OpaquePointer?
        let result = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard result >= 0, let message else { throw DBusFailure(name: "call", message: "sd_bus_message_new_method_call \(member)", errno: -result) }
        do { try append(DBusWriter(message: message)) } catch { sd_bus_message_unref(message); throw error }
        return message
    }

    /// Calls `member` as `call` does, but waits for the reply as `wait(for:timeout:)` waits
    /// for a signal: in slices, so that a cancelled wait (`WaitCancellation`) ends within one
    /// (`DBusFailure` named `cancelled`) even when the peer is slow to answer. Throws
    /// `DBusFailure` with the error the peer answered, `timeout` after `timeout`.
    func callCancellable(_ destination: String, _ path: String, _ interface: String, _ member: String,
                         timeout: Duration = .seconds(25), append: (DBusWriter) throws -> Void = { _ in }) throws -> DBusMessage {
        let message = try methodCall(destination, path, interface, member, append: append)
        defer { sd_bus_message_unref(message) }
        let pending = DBusSignalWatch(description: "the reply to \(interface).\(member)")
        var slot: OpaquePointer?
        let handler: sd_bus_message_handler_t = { reply, context, _ in
            guard let reply, let context else { return 0 }
            let pending = Unmanaged<DBusSignalWatch>.fromOpaque(context).takeUnretainedValue()
            if pending.received == nil { pending.received = DBusMessage(retaining: reply) }
            return 0
        }
        let result = sd_bus_call_async(bus, &slot, message, handler, Unmanaged.passUnretained(pending).toOpaque(),
                                   DBusConnection.microseconds(timeout))
        if result < 0 { throw DBusFailure(name: "call", message: "sd_bus_call_async \(member)", errno: -result) }
        pending.slot = slot
        // The reply's own timeout (sd-bus answers NoReply) comes first; the wait's is a backstop.
        let reply = try wait(for: pending, timeout: timeout + .seconds(5))
        if let error = sd_bus_message_get_error(reply.message), sd_bus_error_is_set(error) != 0 {
            throw DBusFailure(name: error.pointee.name.map { String(cString: $0) } ?? "call",
                              message: error.pointee.message.map { String(cString: $0) } ?? "", errno: sd_bus_error_get_errno(error))
        }
        return reply
    }

    /// Starts catching signal `member` of `interface` sent from `path` (any sender: a
    /// well-known name cannot be matched locally). Watch before the call that makes it.
    func watchSignal(path: String, interface: String, member: String) throws -> DBusSignalWatch {
        let watch = DBusSignalWatch(description: "\(interface).\(member) on \(path)")
        var slot: OpaquePointer?
        let handler: sd_bus_message_handler_t = { message, context, _ in
            guard let message, let context else { return 0 }
            let watch = Unmanaged<DBusSignalWatch>.fromOpaque(context).takeUnretainedValue()
            if watch.received == nil { watch.received = DBusMessage(retaining: message) }
            return 0
        }
        let result = sd_bus_match_signal(bus, &slot, nil, path, interface, member, handler, Unmanaged.passUnretained(watch).toOpaque())
        if result < 0 { throw DBusFailure(name: "match", message: "sd_bus_match_signal \(path) \(member)", errno: -result) }
        watch.slot = slot
        return watch
    }

    /// Processes incoming messages until `watch` has caught its signal, for at most `timeout`.
    /// Throws `DBusFailure` named `timeout` when it did not come, `cancelled` when the thread's
    /// `WaitCancellation` was set meanwhile.
    func wait(for watch: DBusSignalWatch, timeout: Duration) throws -> DBusMessage {
        let deadline = MonotonicClock.now() &+ UInt64(max(timeout.nanosecondCount, 0))
        while true {
            if let message = watch.received { return message }
            let processed = sd_bus_process(bus, nil)
            if processed < 0 { throw DBusFailure(name: "process", message: "sd_bus_process", errno: -processed) }
            if processed > 0 { continue }
            let now = MonotonicClock.now()
            if now >= deadline { throw DBusFailure(name: "timeout", message: "no signal from \(watch.description)", errno: ETIMEDOUT) }
            // In slices, so that a cancelled wait (`WaitCancellation`) ends within one.
            let slice = UInt64(WaitCancellation.slice.nanosecondCount)
            let waited = sd_bus_wait(bus, min(deadline - now, slice) / 1000)
            if waited < 0 && waited != -EINTR { throw DBusFailure(name: "wait", message: "sd_bus_wait", errno: -waited) }
            if WaitCancellation.isCurrentCancelled {
                throw DBusFailure(name: "cancelled", message: "the task waiting for \(watch.description) was cancelled", errno: ECANCELED)
            }
        }
    }

    private static func microseconds(_ duration: Duration) -> UInt64 {
        UInt64(max(duration.nanosecondCount, 0) / 1000)
    }
}

/// A signal match and the first signal it caught; removing the match when released.
final class DBusSignalWatch: CustomStringConvertible {
    fileprivate var slot: OpaquePointer?
    fileprivate var received: DBusMessage?
    /// The signal watched, for messages.
    let description: String

    fileprivate init(description: String) { self.description = description }

    deinit { if let slot { sd_bus_slot_unref(slot) } }
}

/// A D-Bus message read front to back. Owns one reference to the `sd_bus_message`.
final class DBusMessage {
    /// The `sd_bus_message`.
    let message: OpaquePointer

    /// Takes over the reference `message` carries.
    init(taking message: OpaquePointer) { self.message = message }

    /// Takes a new reference to `message`.
    init(retaining message: OpaquePointer) { self.message = sd_bus_message_ref(message) }

    deinit { sd_bus_message_unref(message) }

    /// The next value (variants unwrapped); `nil` at the end.
    func read() throws -> DBusValue? { try DBusValue.read(message) }
}

/// Writes the arguments of a method call.
struct DBusWriter {
    /// The message written.
    let message: OpaquePointer

    /// Appends an `s`.
    func append(string: String) throws { try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), string)) }

    /// Appends an `o`.
    func append(objectPath: String) throws { try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "o")), objectPath)) }

    /// Appends an `a{sv}` of `options`, in order.
    func append(options: [(String, DBusOption)]) throws {
        try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "a")), "{sv}"))
        for (key, value) in options {
            try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "e")), "sv"))
            try append(string: key)
            switch value {
            case .string(let text):
                try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "s"))
                try append(string: text)
            case .uint32(var number):
                try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "u"))
                try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &number))
            case .bool(let flag):
                var number: Int32 = flag ? 1 : 0
                try check(sd_bus_message_open_container(message, CChar(UInt8(ascii: "v")), "b"))
                try check(sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &number))
            }
            try check(sd_bus_message_close_container(message))
            try check(sd_bus_message_close_container(message))
        }
        try check(sd_bus_message_close_container(message))
    }

    private func check(_ result: Int32) throws {
        if result < 0 { throw DBusFailure(name: "append", message: "sd_bus_message_append", errno: -result) }
    }
}

/// A value in an `a{sv}` of options.
enum DBusOption {
    /// `s`.
    case string(String)
    /// `u`.
    case uint32(UInt32)
    /// `b`.
    case bool(Bool)
}
#endif

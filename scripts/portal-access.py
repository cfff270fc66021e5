#!/usr/bin/python3
# portal-access: a test-only org.freedesktop.impl.portal.Access backend for the Camera portal
# in the rig (xdg-desktop-portal 1.16 offers org.freedesktop.portal.Camera only when some
# backend implements Access; the desktops' ones need a GUI). It owns
# org.freedesktop.impl.portal.desktop.mediadevicestest on the session bus and answers every
# AccessDialog with the number in the file $ACCESS_RESPONSE_FILE (0 granted, 1 refused; 0 when
# the file is missing), or never when the file says "hang" (a user who does not answer),
# printing one line per dialog ("AccessDialog APP_ID TITLE RESPONSE").
# Started by `scripts/camera-session.sh start DIR --portal`; uses Debian's python3-dbus and
# python3-gi (GLib main loop).
import os
import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)


class Access(dbus.service.Object):
    pending = []

    @dbus.service.method("org.freedesktop.impl.portal.Access", in_signature="osssssa{sv}", out_signature="ua{sv}",
                         async_callbacks=("reply", "error"))
    def AccessDialog(self, handle, app_id, parent_window, title, subtitle, body, options, reply, error):
        try:
            with open(os.environ.get("ACCESS_RESPONSE_FILE", "/nonexistent")) as f:
                text = f.read().strip() or "0"
        except OSError:
            text = "0"
        print("AccessDialog", repr(str(app_id)), repr(str(title)), text, flush=True)
        if text == "hang":
            self.pending.append(reply)  # never answered
            return
        reply(dbus.UInt32(int(text)), dbus.Dictionary({}, signature="sv"))


bus = dbus.SessionBus()
name = dbus.service.BusName("org.freedesktop.impl.portal.desktop.mediadevicestest", bus)
Access(bus, "/org/freedesktop/portal/desktop")
print("ready", flush=True)
GLib.MainLoop().run()

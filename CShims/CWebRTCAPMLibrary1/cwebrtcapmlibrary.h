// CWebRTCAPMLibrary: WebRTC's audio processing module, webrtc-audio-processing 1.x (Debian 13's
// 1.3), its headers through include/ (a symbolic link to /usr/include/webrtc-audio-processing-1: see
// Package.swift), for the CWebRTCAPM shim to compile
// against and link. Package.swift takes this folder instead of CShims/CWebRTCAPMLibrary (0.3)
// when pkg-config finds 1.x: the module is the same, the library's name differs. Its headers are
// C++: Swift never imports them (it calls CWebRTCAPM), so this header includes none of them.
#ifndef CWEBRTCAPMLIBRARY_H
#define CWEBRTCAPMLIBRARY_H
#endif

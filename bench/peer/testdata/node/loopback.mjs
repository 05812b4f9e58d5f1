// Preloaded into the Portkey gateway's node process by bench/peer (node --import).
//
// Portkey's start-server.js passes no hostname to @hono/node-server, so Node would listen
// on every interface. The bench only ever talks to it over loopback, and a gateway that
// forwards to any x-portkey-custom-host should not be reachable from elsewhere while it
// runs, so a listen on a bare port is pinned to 127.0.0.1. Nothing else is changed.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number") {
    if (args.length === 1 || typeof args[1] === "function") {
      args.splice(1, 0, "127.0.0.1");
    } else if (args[1] === undefined || args[1] === null || args[1] === "") {
      args[1] = "127.0.0.1";
    }
  }
  return listen.apply(this, args);
};

package io.cairn.server.http;

import io.cairn.engine.sql.SqlException;
import io.cairn.engine.sql.SqlState;
import io.cairn.engine.sql.Statements;
import io.cairn.node.Frontend;
import io.cairn.node.NodeApi;
import io.cairn.node.NodeUnavailableException;
import io.cairn.engine.sql.StatementBudget;
import io.cairn.engine.sql.StatementCanceledException;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's HTTP endpoint (Netty; binds 127.0.0.1 unless configured otherwise): {@code POST /sql}
 * (body: statements; {@code ?format=table|json|csv}), {@code GET /status}, {@code POST /snapshot},
 * {@code GET /metrics} (Prometheus), {@code GET /recovery}, {@code GET /health/live} and {@code GET
 * /health/ready} (Kubernetes-style probes: 200 or 503).
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>No thread waits for a client. Requests are read and parsed by Netty's event loops
 *       (non-blocking), so a client that sends its headers a byte at a time costs a socket and a
 *       few hundred bytes, never a thread. Every request must arrive whole within {@link
 *       Limits#requestTimeout} of its first byte (else the connection closes), and a connection
 *       with no request in flight closes after {@link Limits#idleTimeout}.
 *   <li>Bounded connections. At most {@link Limits#maxConnections} are open. At the limit a new
 *       connection takes the place of the connection that has been waiting longest for a request
 *       to arrive whole (or idle) for over a second; if there is none, the new one is closed at
 *       once. So slow clients cannot lock monitoring out.
 *   <li>Monitoring never waits behind SQL. {@code /status}, {@code /metrics}, {@code /recovery}
 *       and the probes run on their own two threads; {@code /sql} and {@code /snapshot} on {@link
 *       Limits#sqlThreads} others, with at most {@link Limits#sqlQueue} waiting (more: 503 at once).
 *       The node's status methods read published values only, so they answer in microseconds.
 *   <li>Bounded work. A request body above {@link Limits#maxBodyBytes} is refused with 413 without
 *       being kept: the answer leaves at once (with {@code Connection: close}), then up to {@value
 *       #MAX_SWALLOW_BYTES} bytes of what the client still sends are read and discarded before the
 *       close, so a client still sending sees the 413 rather than a connection reset. A statement
 *       runs within its {@link StatementBudget} (the statement timeout), which is also cancelled
 *       when the client disconnects: its thread is free within milliseconds.
 *   <li>Answers. A bad statement or request is 400 with the message (at most {@value
 *       #MAX_ERROR_CHARS} characters, never the whole input echoed); a node that cannot serve now
 *       (recovering, fenced: {@link NodeUnavailableException}) is 503 with the reason; a statement
 *       out of time is 504; anything else 500. Every error also carries its SQLSTATE (the code
 *       pgwire sends for it, {@link SqlState#of}) in the {@value #SQLSTATE_HEADER} header; results
 *       are the node's typed results, rendered by {@link SqlResults}. A handler thread survives every error, a {@link
 *       StackOverflowError} included. One request at a time per connection: pipelined requests
 *       wait their turn (at most {@value #MAX_PIPELINED}, else the connection closes).
 * </ul>
 */
public final class HttpEndpoint implements Frontend {
  private static final Logger LOG = LoggerFactory.getLogger(HttpEndpoint.class);
  private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();
  static final int MAX_ERROR_CHARS = 2000;
  /** The default request body limit: 1 MiB. */
  public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;
  /** How much of a refused body is read and discarded so that the 413 reaches the client. */
  static final int MAX_SWALLOW_BYTES = 64 << 20;
  static final int MAX_PIPELINED = 8;
  static final int MAX_INITIAL_LINE = 8192;
  static final int MAX_HEADER_BYTES = 16384;
  /** A connection at the limit may be replaced once it has waited this long for a whole request. */
  static final long EVICTABLE_AFTER_NANOS = 1_000_000_000L;

  /**
   * The endpoint's bounds.
   *
   * @param maxBodyBytes largest request body ({@code http.max-body})
   * @param maxConnections connections open at once ({@code http.max-connections})
   * @param requestTimeout from a request's first byte to its last ({@code http.request-timeout})
   * @param idleTimeout a connection with no request in flight closes after this ({@code http.idle-timeout})
   * @param sqlThreads requests running SQL or a snapshot at once ({@code http.sql-threads})
   * @param sqlQueue such requests waiting for a thread ({@code http.sql-queue}); more get 503
   */
  public record Limits(int maxBodyBytes, int maxConnections, Duration requestTimeout, Duration idleTimeout, int sqlThreads,
      int sqlQueue) {
    public Limits {
      if (maxBodyBytes < 1 || maxConnections < 1 || sqlThreads < 1 || sqlQueue < 0) {
        throw new IllegalArgumentException("Cannot configure HTTP: limits must be positive: " + maxBodyBytes + ", "
            + maxConnections + ", " + sqlThreads + ", " + sqlQueue);
      }
      if (requestTimeout.isNegative() || requestTimeout.isZero() || idleTimeout.isNegative() || idleTimeout.isZero()) {
        throw new IllegalArgumentException("Cannot configure HTTP: timeouts must be positive");
      }
    }

    public static Limits defaults() {
      return new Limits(DEFAULT_MAX_BODY_BYTES, 1024, Duration.ofSeconds(10), Duration.ofSeconds(30), 8, 64);
    }

    public Limits withMaxBodyBytes(int n) {
      return new Limits(n, maxConnections, requestTimeout, idleTimeout, sqlThreads, sqlQueue);
    }
  }

  private final NodeApi api;
  private final Limits limits;
  private final EventLoopGroup boss;
  private final EventLoopGroup loops;
  private Channel server;
  private final ThreadPoolExecutor control;
  private final ThreadPoolExecutor work;
  private final AtomicInteger open = new AtomicInteger();
  /** Connections with no request in flight, by when they started waiting (for eviction at the limit). */
  private final Map<Channel, Long> waiting = new ConcurrentHashMap<>();
  private final AtomicLong refused = new AtomicLong();
  /** SUBSCRIBE responses streaming now. */
  private final AtomicInteger subscribers = new AtomicInteger();
  /** The most SUBSCRIBE responses streaming at once (each has a thread). */
  static final int MAX_SUBSCRIBERS = 64;
  private final AtomicLong evicted = new AtomicLong();
  private final AtomicLong timedOut = new AtomicLong();

  public HttpEndpoint(String host, int port, NodeApi api) {
    this(host, port, Limits.defaults(), api);
  }

  public HttpEndpoint(String host, int port, Limits limits, NodeApi api) {
    this.api = api;
    this.limits = limits;
    this.control = pool("cairn-http-status", 2, 256);
    this.work = pool("cairn-http-sql", limits.sqlThreads(), limits.sqlQueue());
    this.boss = new MultiThreadIoEventLoopGroup(1, daemon("cairn-http-accept"), NioIoHandler.newFactory());
    this.loops = new MultiThreadIoEventLoopGroup(2, daemon("cairn-http-io"), NioIoHandler.newFactory());
    try {
      server = new ServerBootstrap()
          .group(boss, loops)
          .channel(NioServerSocketChannel.class)
          .option(ChannelOption.SO_BACKLOG, 1024)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              admit(ch);
            }
          })
          .bind(new InetSocketAddress(host, port)).syncUninterruptibly().channel();
    } catch (RuntimeException e) {
      close();
      throw new UncheckedIOException("Cannot start HTTP endpoint on " + host + ":" + port + ": " + e.getMessage(),
          new java.io.IOException(e));
    }
    LOG.info("HTTP endpoint listening on http://{}:{}", host, port());
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  private static ThreadPoolExecutor pool(String name, int threads, int queue) {
    ThreadPoolExecutor p = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        queue == 0 ? new java.util.concurrent.SynchronousQueue<>() : new ArrayBlockingQueue<>(queue), daemon(name),
        new ThreadPoolExecutor.AbortPolicy());
    p.allowCoreThreadTimeOut(true);
    return p;
  }

  public String name() {
    return "http";
  }

  @Override
  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  /** Connections open now. */
  public int openConnections() {
    return open.get();
  }

  /** Connections refused at the limit, replaced at the limit, and closed for a request that did not arrive in time. */
  public Map<String, Long> counters() {
    return Map.of("refused", refused.get(), "evicted", evicted.get(), "requestTimeouts", timedOut.get());
  }

  // ---------------------------------------------------------------- connections

  private void admit(SocketChannel ch) {
    ch.closeFuture().addListener(f -> {
      open.decrementAndGet();
      waiting.remove(ch);
    });
    if (open.incrementAndGet() > limits.maxConnections() && !evictOne()) {
      refused.incrementAndGet();
      ch.writeAndFlush(Unpooled.copiedBuffer(("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\n"
          + "Content-Length: 61\r\n\r\nToo many connections (http.max-connections); try again later\n").getBytes(StandardCharsets.US_ASCII)))
          .addListener(ChannelFutureListener.CLOSE);
      return;
    }
    waiting.put(ch, System.nanoTime());
    ch.pipeline()
        .addLast("deadline", new RequestDeadline())
        .addLast("idle", new IdleStateHandler(0, 0, limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS))
        .addLast("codec", new HttpServerCodec(MAX_INITIAL_LINE, MAX_HEADER_BYTES, 64 << 10))
        .addLast("requests", new Requests());
  }

  /** Closes the connection that has waited longest (over a second) for a whole request; false when none has. */
  private boolean evictOne() {
    long now = System.nanoTime();
    Channel oldest = null;
    long since = Long.MAX_VALUE;
    for (Map.Entry<Channel, Long> e : waiting.entrySet()) {
      if (now - e.getValue() > EVICTABLE_AFTER_NANOS && e.getValue() < since) {
        since = e.getValue();
        oldest = e.getKey();
      }
    }
    if (oldest == null || waiting.remove(oldest) == null) {
      return false;
    }
    evicted.incrementAndGet();
    oldest.close();
    return true;
  }

  /** Closes the connection when a request has not arrived whole within the request timeout of its first byte. */
  private final class RequestDeadline extends ChannelInboundHandlerAdapter {
    private io.netty.util.concurrent.Future<?> timer;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (timer == null) {
        timer = ctx.executor().schedule(() -> {
          timedOut.incrementAndGet();
          ctx.close();
        }, limits.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
      }
      ctx.fireChannelRead(msg);
    }

    /** The request being read arrived whole (event loop only). */
    void arrived() {
      if (timer != null) {
        timer.cancel(false);
        timer = null;
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      arrived();
      ctx.fireChannelInactive();
    }
  }

  // ---------------------------------------------------------------- requests

  /** A request read whole. */
  private record Request(HttpMethod method, String uri, String body, boolean keepAlive) {}

  /** A response to write. */
  /** An answer; {@code sqlState} (null: none) is sent as the {@value #SQLSTATE_HEADER} header of an error. */
  private record Response(HttpResponseStatus status, String body, String type, boolean close, String sqlState) {
    Response(HttpResponseStatus status, String body, String type, boolean close) {
      this(status, body, type, close, null);
    }
  }

  /** The header that carries an error's SQLSTATE (the code pgwire would send: 42601, 57014, 57P03, ...). */
  public static final String SQLSTATE_HEADER = "X-Cairn-SQLState";

  /** Reads requests whole (bounded), runs them one at a time per connection, writes the answers. Event loop only. */
  private final class Requests extends ChannelInboundHandlerAdapter {
    private HttpRequest head;
    private CompositeByteBuf body;
    private boolean discarding;
    private long discarded;
    private boolean busy;
    private StatementBudget running;
    private final ArrayDeque<Request> pending = new ArrayDeque<>();

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      try {
        if (msg instanceof HttpRequest req) {
          startRequest(ctx, req);
        }
        if (msg instanceof HttpContent c) {
          content(ctx, c);
        }
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    private void startRequest(ChannelHandlerContext ctx, HttpRequest req) {
      waiting.remove(ctx.channel());
      releaseBody();
      if (req.decoderResult().isFailure()) {
        String why = String.valueOf(req.decoderResult().cause().getMessage());
        boolean tooLong = req.decoderResult().cause() instanceof io.netty.handler.codec.TooLongFrameException;
        write(ctx, new Response(tooLong ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE : HttpResponseStatus.BAD_REQUEST,
            "Bad HTTP request: " + clip(why) + "\n", "text/plain", true), false);
        discarding = true; // read nothing more of it
        return;
      }
      head = req;
      discarding = false;
      discarded = 0;
      body = ctx.alloc().compositeBuffer();
      long declared = HttpUtil.getContentLength(req, -1L);
      if (declared > limits.maxBodyBytes()) {
        refuseBody(ctx, "Request body of " + declared + " bytes is over the limit of " + limits.maxBodyBytes() + " bytes (http.max-body)");
      } else if (HttpUtil.is100ContinueExpected(req)) {
        ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
      }
    }

    private void content(ChannelHandlerContext ctx, HttpContent c) {
      if (discarding) {
        discarded += c.content().readableBytes();
        if (discarded > MAX_SWALLOW_BYTES || c instanceof LastHttpContent) {
          ctx.close();
        }
        return;
      }
      if (head == null) {
        return;
      }
      if (body.readableBytes() + (long) c.content().readableBytes() > limits.maxBodyBytes()) {
        refuseBody(ctx, "Request body is over the limit of " + limits.maxBodyBytes() + " bytes (http.max-body)");
        if (c instanceof LastHttpContent) {
          ctx.close();
        }
        return;
      }
      body.addComponent(true, c.content().retain());
      if (c instanceof LastHttpContent) {
        ((RequestDeadline) ctx.pipeline().get("deadline")).arrived();
        Request r = new Request(head.method(), head.uri(), body.toString(StandardCharsets.UTF_8), HttpUtil.isKeepAlive(head));
        head = null;
        releaseBody();
        if (busy) {
          if (pending.size() >= MAX_PIPELINED) {
            ctx.close();
            return;
          }
          pending.add(r);
        } else {
          run(ctx, r);
        }
      }
    }

    /** 413 now, then read and drop what the client still sends (up to a bound) before closing. */
    private void refuseBody(ChannelHandlerContext ctx, String message) {
      discarding = true;
      head = null;
      releaseBody();
      ((RequestDeadline) ctx.pipeline().get("deadline")).arrived();
      FullHttpResponse res = response(new Response(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, message + "\n", "text/plain", true));
      ctx.writeAndFlush(res);
    }

    private void releaseBody() {
      if (body != null) {
        body.release();
        body = null;
      }
    }

    private void run(ChannelHandlerContext ctx, Request r) {
      busy = true;
      String path = new QueryStringDecoder(r.uri()).path();
      Route route = route(path);
      if (route == null) {
        done(ctx, r, new Response(HttpResponseStatus.NOT_FOUND, "No such path: " + clip(path)
            + " (use /sql, /status, /snapshot, /metrics, /recovery, /advise, /health/live, /health/ready)\n", "text/plain", false));
        return;
      }
      if (!r.method().name().equalsIgnoreCase(route.method())) {
        done(ctx, r, new Response(HttpResponseStatus.METHOD_NOT_ALLOWED, "Use " + route.method() + " for " + path + "\n", "text/plain", false));
        return;
      }
      if (path.equals("/sql") && io.cairn.engine.sql.Subscribe.is(r.body())) {
        subscribe(ctx, r);
        return;
      }
      if (path.equals("/sql")) {
        try {
          // cheap refusals do not wait for a SQL thread: one pass over at most http.max-body characters
          io.cairn.engine.sql.SqlSession.checkNesting(r.body());
        } catch (SqlException e) {
          done(ctx, r, error(HttpResponseStatus.BAD_REQUEST, e.getMessage(), e));
          return;
        }
      }
      StatementBudget budget = StatementBudget.of(api.statementTimeout());
      running = budget;
      Supplier<Response> action = route.action(r, budget);
      try {
        (route.sql() ? work : control).execute(() -> {
          Response res = answer(r, action);
          ctx.channel().eventLoop().execute(() -> done(ctx, r, res));
        });
      } catch (RejectedExecutionException e) {
        done(ctx, r, new Response(HttpResponseStatus.SERVICE_UNAVAILABLE, route.sql()
            ? "Cannot run request: " + limits.sqlThreads() + " requests are running and " + limits.sqlQueue()
                + " waiting (http.sql-threads, http.sql-queue); try again later\n"
            : "Cannot answer: the status threads are saturated; try again later\n", "text/plain", false, "53000"));
      }
    }

    /**
     * {@code SUBSCRIBE} over {@code POST /sql}: a streamed response of newline-delimited JSON
     * ({@link SqlResults#ndjson}) on a thread of its own, until the client goes or the subscription
     * ends (a last line {@code {"error":…,"sqlstate":…}}); the connection then closes. The thread
     * writes only while the channel is writable: a client that stops reading leaves its rows in the
     * subscription, which is ended when they pass its bound. At most {@value #MAX_SUBSCRIBERS} at once.
     */
    private void subscribe(ChannelHandlerContext ctx, Request r) {
      if (subscribers.incrementAndGet() > MAX_SUBSCRIBERS) {
        subscribers.decrementAndGet();
        done(ctx, r, new Response(HttpResponseStatus.SERVICE_UNAVAILABLE, "Cannot subscribe: " + MAX_SUBSCRIBERS
            + " subscriptions are streaming over HTTP; try again later\n", "text/plain", false, "53300"));
        return;
      }
      Thread t = new Thread(() -> {
        try {
          stream(ctx, r);
        } finally {
          subscribers.decrementAndGet();
        }
      }, "cairn-http-subscribe");
      t.setDaemon(true);
      t.start();
    }

    private void stream(ChannelHandlerContext ctx, Request r) {
      Channel ch = ctx.channel();
      io.cairn.engine.sql.Subscribe.Running running;
      try {
        running = api.subscribe(io.cairn.engine.sql.Subscribe.parse(r.body()));
      } catch (RuntimeException | StackOverflowError e) {
        Response res = answer(r, () -> {
          if (e instanceof RuntimeException re) {
            throw re;
          }
          throw (StackOverflowError) e;
        });
        ch.eventLoop().execute(() -> done(ctx, r, res));
        return;
      }
      try {
        List<String> columns = running.columns().columns().stream().map(io.cairn.engine.row.Column::name).toList();
        io.netty.handler.codec.http.HttpResponse head = new io.netty.handler.codec.http.DefaultHttpResponse(HttpVersion.HTTP_1_1,
            HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/x-ndjson");
        head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ch.writeAndFlush(head);
        String end = null;
        while (ch.isActive() && end == null) {
          while (!ch.isWritable() && ch.isActive() && !running.reader().isEnded()) {
            Thread.sleep(10);
          }
          try {
            io.cairn.engine.sink.ChangeFeed.Changes c = running.reader().next(200);
            if (c != null) {
              String lines = SqlResults.ndjson(running.statement().rows(c, running.columns()), columns);
              if (!lines.isEmpty()) {
                ch.writeAndFlush(new io.netty.handler.codec.http.DefaultHttpContent(Unpooled.wrappedBuffer(lines.getBytes(StandardCharsets.UTF_8))));
              }
            }
          } catch (io.cairn.engine.sink.ChangeFeed.Ended e) {
            end = JSON.writeValueAsString(Map.of("error", e.getMessage(), "sqlstate", e.sqlState())) + "\n";
          }
        }
        if (ch.isActive()) {
          ch.write(new io.netty.handler.codec.http.DefaultHttpContent(Unpooled.wrappedBuffer(end.getBytes(StandardCharsets.UTF_8))));
          ch.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT).addListener(ChannelFutureListener.CLOSE);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        ch.close();
      } catch (RuntimeException | com.fasterxml.jackson.core.JsonProcessingException e) {
        LOG.warn("HTTP SUBSCRIBE failed", e);
        ch.close();
      } finally {
        running.reader().close();
      }
    }

    private void done(ChannelHandlerContext ctx, Request r, Response res) {
      running = null;
      busy = false;
      if (!ctx.channel().isActive()) {
        return;
      }
      write(ctx, res, r.keepAlive());
      Request next = pending.poll();
      if (next != null) {
        run(ctx, next);
      } else {
        waiting.put(ctx.channel(), System.nanoTime());
      }
    }

    private void write(ChannelHandlerContext ctx, Response res, boolean keepAlive) {
      FullHttpResponse out = response(res);
      boolean close = res.close() || !keepAlive;
      if (close) {
        out.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
      } else {
        out.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        ctx.writeAndFlush(out);
      }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof IdleStateEvent && !busy && head == null) {
        ctx.close();
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      StatementBudget b = running;
      if (b != null) {
        b.cancel(StatementCanceledException.USER_REQUEST); // the client has gone: stop its statement
      }
      pending.clear();
      releaseBody();
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      LOG.debug("HTTP connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
      ctx.close();
    }
  }

  private static FullHttpResponse response(Response res) {
    byte[] bytes = res.body().getBytes(StandardCharsets.UTF_8);
    FullHttpResponse out = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, res.status(), Unpooled.wrappedBuffer(bytes));
    out.headers().set(HttpHeaderNames.CONTENT_TYPE, res.type());
    if (res.sqlState() != null) {
      out.headers().set(SQLSTATE_HEADER, res.sqlState());
    }
    out.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
    if (res.status().equals(HttpResponseStatus.SERVICE_UNAVAILABLE)) {
      out.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
    }
    if (res.close()) {
      out.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
    return out;
  }

  // ---------------------------------------------------------------- routes

  private interface Action {
    Response run(Request r, StatementBudget budget);
  }

  private record Route(String method, boolean sql, Action handler) {
    Supplier<Response> action(Request r, StatementBudget budget) {
      return () -> handler.run(r, budget);
    }
  }

  private Route route(String path) {
    return switch (path) {
      case "/sql" -> new Route("POST", true, (r, b) -> {
        String format = queryParam(r.uri(), "format", "table");
        SqlResults.checkFormat(format);
        return ok(SqlResults.render(api.execute(Statements.split(r.body()), b), format), SqlResults.contentType(format));
      });
      case "/snapshot" -> new Route("POST", true, (r, b) -> ok(api.snapshotJson(), "application/json"));
      case "/status" -> new Route("GET", false, (r, b) -> ok(api.statusJson(), "application/json"));
      case "/metrics" -> new Route("GET", false, (r, b) -> ok(api.prometheus(), "text/plain; version=0.0.4"));
      case "/recovery" -> new Route("GET", false, (r, b) -> ok(api.recoveryReportJson(), "application/json"));
      // on a SQL thread: it asks the sources' systems for their retention, a few seconds at most
      case "/advise" -> new Route("GET", true, (r, b) -> advise(r));
      case "/health/live" -> new Route("GET", false, (r, b) -> health(api.health(), true));
      case "/health/ready" -> new Route("GET", false, (r, b) -> health(api.health(), false));
      default -> null;
    };
  }

  /** {@code GET /advise?target=2m[&format=text]}: advice on the snapshot schedule ({@link NodeApi#advise}). */
  private Response advise(Request r) {
    String format = queryParam(r.uri(), "format", "json");
    if (!format.equals("json") && !format.equals("text")) {
      throw new IllegalArgumentException("Cannot advise: format '" + clip(format) + "' is not json or text");
    }
    io.cairn.node.advise.AdviceReport report = api.advise(adviseTarget(queryParam(r.uri(), "target", null)));
    if (format.equals("text")) {
      return ok(report.toText(), "text/plain; charset=utf-8");
    }
    try {
      return ok(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(report.toJsonTree()) + "\n", "application/json");
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The longest target recovery time {@link #adviseTarget} takes (longer ones overflowed the model's arithmetic). */
  static final java.time.Duration MAX_ADVISE_TARGET = java.time.Duration.ofDays(365);

  /**
   * The target recovery time of {@code cairn advise} and {@code GET /advise}: a positive duration
   * written as the configuration writes them ({@code 90s}, {@code 2m}, {@code 1h}), at most 365 days.
   *
   * @throws IllegalArgumentException naming what was wrong
   */
  public static java.time.Duration adviseTarget(String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("Cannot advise: the target recovery time is missing (e.g. target=2m)");
    }
    if (text.strip().startsWith("-")) {
      throw new IllegalArgumentException("Cannot advise: target recovery time '" + clip(text) + "' must be more than zero");
    }
    java.time.Duration d;
    try {
      d = io.cairn.node.config.ConfigLoader.parseDuration("target recovery time", text);
    } catch (io.cairn.node.config.ConfigException | ArithmeticException e) {
      throw new IllegalArgumentException("Cannot advise: target recovery time '" + clip(text) + "' is not a duration: write a "
          + "whole number and a unit (ms, s, m, h or d), e.g. 90s, 2m, 1h");
    }
    if (d.isZero()) {
      throw new IllegalArgumentException("Cannot advise: target recovery time '" + clip(text) + "' must be more than zero");
    }
    if (d.compareTo(MAX_ADVISE_TARGET) > 0) {
      throw new IllegalArgumentException("Cannot advise: target recovery time '" + clip(text) + "' is more than "
          + MAX_ADVISE_TARGET.toDays() + "d; no schedule needs a longer one");
    }
    return d;
  }

  private static Response health(NodeApi.Health h, boolean liveness) {
    boolean ok = liveness ? h.live() : h.ready();
    String body;
    try {
      body = JSON.writeValueAsString(h) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    return new Response(ok ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE, body, "application/json", false);
  }

  private static Response ok(String body, String type) {
    return new Response(HttpResponseStatus.OK, body, type, false);
  }

  /** Runs an action and turns what it throws into an answer. */
  private static Response answer(Request r, Supplier<Response> action) {
    try {
      return action.get();
    } catch (NodeUnavailableException e) {
      return error(HttpResponseStatus.SERVICE_UNAVAILABLE, e.getMessage(), e);
    } catch (StatementCanceledException e) {
      return error(HttpResponseStatus.GATEWAY_TIMEOUT, e.getMessage(), e);
    } catch (SqlException | IllegalArgumentException | IllegalStateException e) {
      return error(HttpResponseStatus.BAD_REQUEST, e.getMessage(), e);
    } catch (StackOverflowError e) {
      return error(HttpResponseStatus.BAD_REQUEST, "Cannot execute request: it is nested too deeply", e);
    } catch (RuntimeException e) {
      LOG.warn("HTTP {} failed", r.uri(), e);
      return error(HttpResponseStatus.INTERNAL_SERVER_ERROR, e.getClass().getSimpleName() + ": " + e.getMessage(), e);
    }
  }

  private static Response error(HttpResponseStatus status, String message, Throwable cause) {
    return new Response(status, clip(message) + "\n", "text/plain", false, SqlState.of(cause));
  }

  /** The value of query parameter {@code name}, or {@code def}. */
  private static String queryParam(String uri, String name, String def) {
    List<String> v = new QueryStringDecoder(uri).parameters().get(name);
    return v == null || v.isEmpty() ? def : v.get(0);
  }

  private static String clip(String message) {
    String m = message == null ? "" : message;
    return m.length() <= MAX_ERROR_CHARS ? m : m.substring(0, MAX_ERROR_CHARS) + "... (" + (m.length() - MAX_ERROR_CHARS) + " more characters)";
  }

  @Override
  public void close() {
    if (server != null) {
      server.close().syncUninterruptibly();
    }
    if (boss != null) {
      boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
    if (loops != null) {
      loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    control.shutdownNow();
    work.shutdownNow();
  }
}

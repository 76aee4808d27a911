SELECT auction, bidder, 0.908 * price as price, dateTime, extra FROM bid
